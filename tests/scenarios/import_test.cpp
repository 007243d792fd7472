// The importers of users' own configurations (Megatron-LM launch scripts, torchtitan TOML, Hugging Face
// config.json): the shell reading, the keys each flag or field gives, Megatron's and torchtitan's own
// defaults, warnings for what is not modelled, and errors that name the file and the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "models/model_spec.hpp"
#include "scenarios/error.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/shell_words.hpp"
#include "scenarios/load.hpp"
#include "support/import_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

namespace im = clustersim::scenarios::importers;
using clustersim::scenarios::ScenarioError;

namespace {

std::string input(const std::string& name) { return clustersim::testing::import_input(name); }
std::string value(const im::Imported& i, const std::string& path) {
  return clustersim::testing::imported_key(i, path).value;
}
bool warned(const im::Imported& i, const std::string& part) { return clustersim::testing::import_warned(i, part); }

im::ImportOptions opts(int gpus = 0) {
  im::ImportOptions o;
  o.source = "launch.sh";
  o.gpus = gpus;
  o.hardware = "h100-sxm";
  return o;
}

const std::string kLlama8bArgs =
    "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 "
    "--vocab-size 32000 --bf16 ";

}  // namespace

TEST_CASE("shell words: continuations, arrays, defaults, arithmetic and quotes as bash hands them over", "[import]") {
  const std::string script =
      "#!/bin/bash\n"
      "export NODES=${NNODES:-4}   # a default\n"
      "GPN=8; WS=$((NODES * GPN))\n"
      "ARGS=(\n  --a 1   # comment inside an array\n  --b \"two words\"\n)\n"
      "OPTS=\"--c $WS --d '${GPN}'\"\n"
      "python train.py \"${ARGS[@]}\" $OPTS \\\n   --e=5 'lit $GPN'\n";
  const auto sh = im::read_shell_words(script);
  const std::vector<std::string> expected = {"python", "train.py", "--a", "1", "--b", "two words", "--c", "32",
                                             "--d", "'8'", "--e=5", "lit $GPN"};
  CHECK(sh.words == expected);
  CHECK(sh.vars.at("WS") == std::vector<std::string>{"32"});
  // A value given on the import command line (WORLD_SIZE=…) beats the script's default.
  CHECK(im::read_shell_words("N=${WORLD_SIZE:-1}\n", {{"WORLD_SIZE", "64"}}).vars.at("N") == std::vector<std::string>{"64"});
}

TEST_CASE("shell words: an unquoted ${A[@]} splits each element, as \"--fp8-format hybrid\" in NVIDIA's scripts", "[import]") {
  const std::string script =
      "A=(\n  \"--fp8-format hybrid\"\n  \"--split '99,1,0'\"\n)\n"
      "B=(\"two words\")\n"
      "run ${A[@]} \"${B[@]}\" ${B[@]}\n";
  const std::vector<std::string> expected = {"run", "--fp8-format", "hybrid", "--split", "'99,1,0'", "two words", "two", "words"};
  CHECK(im::read_shell_words(script).words == expected);
  // $A is the first element only; ${#A[@]} the element count.
  CHECK(im::read_shell_words("A=(x y z)\necho $A ${#A[@]}\n").words == std::vector<std::string>{"echo", "x", "3"});
}

TEST_CASE("shell words: a quoted default ${V:-\"1\"} loses its quotes, and \"\" is one empty word", "[import]") {
  const auto sh = im::read_shell_words("N=${SLURM_NNODES:-\"1\"}\nW=$((8*$N))\nM=${MASTER:-'local host'}\nrun --a \"\" --b\n");
  CHECK(sh.vars.at("N") == std::vector<std::string>{"1"});
  CHECK(sh.vars.at("W") == std::vector<std::string>{"8"});
  CHECK(sh.vars.at("M") == std::vector<std::string>{"local host"});
  CHECK(sh.words == std::vector<std::string>{"run", "--a", "", "--b"});
  CHECK(im::read_shell_words("X=${UNSET:+set}\n").vars.at("X") == std::vector<std::string>{""});
}

TEST_CASE("shell words: if/elif/else branches chosen by the variables the script sets", "[import]") {
  const std::string script =
      "DTYPE=\"fp8\"\nTOK=${3:-\"MOCK\"}\nARGS=()\n"
      "if [[ \"$DTYPE\" == \"fp8\" ]]; then\n  ARGS+=(--fp8-format hybrid)\nelif [ \"$DTYPE\" = bf16 ]; then\n  ARGS+=(--bf16)\n"
      "else\n  ARGS+=(--fp16)\nfi\n"
      "if [[ \"$TOK\" == \"MOCK\" ]] || [[ -z \"$TOK\" ]]; then\n  ARGS+=(--mock-data)\nelse\n  ARGS+=(--data-path x)\nfi\n"
      "if [ -n \"${WANDB_API_KEY}\" ]; then\n  ARGS+=(--wandb-project p)\nfi\n"
      "if [ 4 -gt 2 ] && [[ $DTYPE == fp* ]]; then ARGS+=(--glob); fi\n"
      "run ${ARGS[@]}\n";
  const auto sh = im::read_shell_words(script);
  CHECK(sh.words == std::vector<std::string>{"run", "--fp8-format", "hybrid", "--mock-data", "--glob"});
  CHECK(sh.notes.empty());
  // Arithmetic conditions (( … )), as launch scripts test node counts.
  const auto arith = im::read_shell_words("NNODES=${SLURM_NNODES:-2}\nif (( NNODES > 1 )); then A=multi; elif (( NNODES * 0 )); then A=never; "
                                          "else A=single; fi\nif (( $NNODES == 4 )) || [ x = y ]; then B=4; else B=no; fi\n");
  CHECK(arith.vars.at("A") == std::vector<std::string>{"multi"});
  CHECK(arith.vars.at("B") == std::vector<std::string>{"no"});
  CHECK(im::read_shell_words("if (( N >= 1 )); then A=1; else A=0; fi\n", {{"N", "0"}}).vars.at("A") == std::vector<std::string>{"0"});
  // A script parsing its own arguments: run without any ($# is 0) the loop and its case arms are skipped.
  const auto loop = im::read_shell_words("DATA=MOCK\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n    --data)\n      DATA=\"$2\"\n      shift 2\n"
                                         "      ;;\n  esac\ndone\nfor i in 1 2; do X=$i; done\nuntil true; do Y=1; done\nrun --data $DATA\n");
  CHECK(loop.words == std::vector<std::string>{"run", "--data", "MOCK"});
  CHECK(loop.vars.at("X") == std::vector<std::string>{"1"});  // a for body is read once, with the first value
  CHECK(loop.vars.count("Y") == 0);
  CHECK(loop.notes.empty());
  // A nested if inside a branch not taken stays skipped; WANDB_API_KEY given by the caller takes its branch.
  const auto nested = im::read_shell_words("if false; then\n if true; then A=1; fi\nelse\n A=2\nfi\n");
  CHECK(nested.vars.at("A") == std::vector<std::string>{"2"});
  const auto wandb = im::read_shell_words(script, {{"WANDB_API_KEY", "k"}}).words;
  CHECK(std::find(wandb.begin(), wandb.end(), "--wandb-project") != wandb.end());
}

TEST_CASE("shell words: a condition that needs the script to run is read as false, noted with its line when it matters", "[import]") {
  // Skipping `echo; exit` changes nothing: no note. Skipping flags does: a note naming the line.
  const auto quiet = im::read_shell_words("if [ ! -f \"pretrain_gpt.py\" ]; then\n  echo missing\n  exit 1\nfi\nrun --a 1\n");
  CHECK(quiet.words == std::vector<std::string>{"run", "--a", "1"});
  CHECK(quiet.notes.empty());
  const auto noted = im::read_shell_words("X=1\nif command -v nvidia-smi; then\n  X=2\nfi\n");
  CHECK(noted.vars.at("X") == std::vector<std::string>{"1"});
  REQUIRE(noted.notes.size() == 1);
  CHECK(noted.notes[0].rfind("line 2: ", 0) == 0);
  CHECK(noted.notes[0].find("command -v nvidia-smi") != std::string::npos);
  const im::Imported i = im::import_megatron("if [ -d /data ]; then EXTRA=--swiglu; fi\n" + kLlama8bArgs + "$EXTRA", opts(16));
  CHECK(warned(i, "launch.sh:1: condition `[ -d /data ]`"));
  CHECK(value(i, "model.activation") == "gelu");
}

TEST_CASE("shell words: the script of bash -c \"…\" (after srun, in a heredoc) is read as bash runs it", "[import]") {
  const std::string script =
      "ARGS=(--num-layers 2 \"--hidden-size 64\")\nCMD=\"cd /x; python pretrain_gpt.py ${ARGS[@]}\"\n"
      "sbatch <<EOF\n#SBATCH --nodes=2\nsrun --mpi=pmix bash -x -c \"${CMD}\"\nEOF\n";
  const auto sh = im::read_shell_words(script);
  const auto python = std::find(sh.words.begin(), sh.words.end(), "python");
  REQUIRE(sh.words.end() - python >= 6);
  const std::vector<std::string> tail(python, python + 6);
  CHECK(tail == std::vector<std::string>{"python", "pretrain_gpt.py", "--num-layers", "2", "--hidden-size", "64"});
}

TEST_CASE("megatron: a Llama-3 70B launch script gives its model, plan and training keys", "[import]") {
  const im::Imported i = im::import_megatron(input("llama3_70b_tp8pp4cp2.sh"), opts());
  CHECK(value(i, "model.layers") == "80");
  CHECK(value(i, "model.kv_heads") == "8");
  CHECK(value(i, "model.ffn_hidden") == "28672");
  CHECK(value(i, "model.vocab") == "128256");  // named by the tokenizer model
  CHECK(value(i, "model.activation") == "swiglu");
  CHECK(value(i, "model.tied_embeddings") == "false");
  CHECK(value(i, "model.norm") == "rmsnorm");
  CHECK(value(i, "model.bias") == "false");
  CHECK(value(i, "cluster.gpus") == "512");  // --nnodes (from ${SLURM_NNODES:-64}) x --nproc_per_node
  CHECK(value(i, "parallelism.tp") == "8");
  CHECK(value(i, "parallelism.pp") == "4");
  CHECK(value(i, "parallelism.cp") == "2");
  CHECK(value(i, "parallelism.zero_stage") == "1");
  CHECK(value(i, "training.global_batch") == "512");
  CHECK(value(i, "training.overlap_grad_reduce") == "true");
  CHECK(value(i, "training.tokens") == "15000000004096");  // --train-samples x seq length
  CHECK(i.find("model.moe.experts") == nullptr);
  CHECK(i.find("model.head_dim") == nullptr);  // --kv-channels absent: hidden / heads
  // Learning rate, data paths and logging do not change a step: no warnings for them.
  CHECK_FALSE(warned(i, "--lr"));
  CHECK_FALSE(warned(i, "--data-path"));
  CHECK_FALSE(warned(i, "--save"));
}

TEST_CASE("megatron: flags left out take Megatron's defaults, not clustersim's", "[import]") {
  const im::Imported i = im::import_megatron(kLlama8bArgs, opts(16));
  CHECK(value(i, "model.ffn_hidden") == "16384");   // 4h
  CHECK(value(i, "model.activation") == "gelu");
  CHECK(value(i, "model.tied_embeddings") == "true");
  CHECK(value(i, "model.position") == "learned");
  CHECK(value(i, "model.norm") == "layernorm");
  CHECK(value(i, "model.bias") == "true");
  CHECK(value(i, "model.dropout") == "0.1");
  CHECK(value(i, "parallelism.zero_stage") == "0");
  CHECK(value(i, "training.overlap_grad_reduce") == "false");  // clustersim's default is true
  CHECK(value(i, "training.global_batch") == "16");            // micro-batch x DP
  const im::Imported s = im::import_megatron(kLlama8bArgs + "--swiglu", opts(16));
  CHECK(value(s, "model.ffn_hidden") == "10880");  // int(8*4096/3 / 64) * 64
}

TEST_CASE("megatron: MoE, MLA, virtual pipelines and uneven first/last stages", "[import]") {
  const std::string args =
      "--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --seq-length 4096 --micro-batch-size 1 "
      "--global-batch-size 8192 --vocab-size 129280 --bf16 --swiglu --ffn-hidden-size 18432 --num-experts 256 "
      "--moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
      "--moe-layer-freq ([0]*3+[1]*58) --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 "
      "--mtp-num-layers 1 --expert-model-parallel-size 64 --pipeline-model-parallel-size 16 "
      "--decoder-first-pipeline-num-layers 1 --decoder-last-pipeline-num-layers 4 "
      "--moe-token-dispatcher-type flex --moe-enable-deepep";
  const im::Imported i = im::import_megatron(args, opts(2048));
  CHECK(value(i, "model.moe.experts") == "256");
  CHECK(value(i, "model.moe.top_k") == "8");
  CHECK(value(i, "model.moe.shared_experts") == "1");
  CHECK(value(i, "model.moe.dense_layers") == "3");
  CHECK(i.find("model.moe.frequency") == nullptr);
  CHECK(value(i, "model.mla.kv_lora_rank") == "512");
  CHECK(value(i, "model.mla.qk_rope_head_dim") == "64");  // Megatron default
  CHECK(i.find("model.kv_heads") == nullptr);            // MLA has no GQA groups
  CHECK(value(i, "model.mtp_layers") == "1");
  CHECK(value(i, "parallelism.ep") == "64");
  CHECK(value(i, "parallelism.etp") == "1");
  CHECK(value(i, "parallelism.pp_layers") == "[1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]");
  CHECK(value(i, "training.moe_dispatcher") == "deepep");
  const im::Imported v = im::import_megatron(kLlama8bArgs + "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2", opts(32));
  CHECK(value(v, "parallelism.vpp") == "4");
  CHECK(value(v, "parallelism.schedule") == "interleaved");
}

TEST_CASE("megatron: TransformerConfig MoE defaults and recompute modules and window attention and FSDP sharding", "[import]") {
  const std::string moe = kLlama8bArgs + "--swiglu --num-experts 8 ";
  const im::Imported d = im::import_megatron(moe, opts(8));
  CHECK(value(d, "training.moe_dispatcher") == "allgather");  // moe_token_dispatcher_type default
  CHECK(value(d, "model.moe.top_k") == "2");
  CHECK(value(d, "parallelism.etp") == "1");                  // the tensor-parallel size
  CHECK(value(d, "training.moe_load_imbalance") == "auto");  // real routing, said in the scenario
  CHECK(value(d, "training.moe_a2a_overlap") == "false");
  const im::Imported f = im::import_megatron(moe + "--moe-token-dispatcher-type flex --moe-router-force-load-balancing "
                                                   "--overlap-moe-expert-parallel-comm --expert-model-parallel-size 8 "
                                                   "--recompute-granularity selective --recompute-modules core_attn moe_act",
                                             opts(8));
  CHECK(value(f, "training.moe_dispatcher") == "deepep");  // flex's default backend
  CHECK(value(f, "training.moe_load_imbalance") == "auto");  // forced balance = random logits: the sampling floor
  CHECK(value(f, "training.moe_a2a_overlap") == "true");
  CHECK(value(f, "training.recompute_modules") == "[core_attn, moe_act]");  // nargs='*': every word up to the next flag
  CHECK(f.find("training.moe_dispatcher_sms") == nullptr);  // unset: the scenario's default (DeepEP's 20)
  // The flex backend's SM count: --moe-hybridep-num-sms for hybridep, --moe-deepep-num-sms for deepep.
  const std::string flex = moe + "--moe-token-dispatcher-type flex --expert-model-parallel-size 8 ";
  CHECK(value(im::import_megatron(
                  flex + "--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 32 --moe-deepep-num-sms 24",
                  opts(8)),
              "training.moe_dispatcher_sms") == "32");
  CHECK(value(im::import_megatron(flex + "--moe-deepep-num-sms 24 --moe-hybridep-num-sms 32", opts(8)),
              "training.moe_dispatcher_sms") == "24");
  // Each flex backend is its own dispatcher (their kernels' measured rates differ), with no warning.
  const im::Imported hybrid = im::import_megatron(flex + "--moe-flex-dispatcher-backend hybridep", opts(8));
  CHECK(value(hybrid, "training.moe_dispatcher") == "hybridep");
  for (const auto& w : hybrid.warnings) CHECK(w.find("flex-dispatcher-backend") == std::string::npos);
  // Megatron-Core's unified knob (TransformerConfig moe_flex_dispatcher_num_sms) takes precedence
  // over the deprecated per-backend ones, and is modelled, not warned about.
  const im::Imported unified = im::import_megatron(
      flex + "--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 24 --moe-flex-dispatcher-num-sms 32",
      opts(8));
  CHECK(value(unified, "training.moe_dispatcher_sms") == "32");
  for (const auto& w : unified.warnings) CHECK(w.find("moe-flex-dispatcher-num-sms") == std::string::npos);
  // The MoE host recipe: router/permute fusion and partial CUDA graphs (Megatron --cuda-graph-scope).
  CHECK(d.find("training.moe_router_fusion") == nullptr);
  const im::Imported g = im::import_megatron(moe + "--moe-router-fusion --moe-permute-fusion --expert-model-parallel-size 8 "
                                                   "--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess",
                                             opts(8));
  CHECK(value(g, "training.moe_router_fusion") == "true");
  CHECK(value(g, "training.moe_permute_fusion") == "true");
  CHECK(value(g, "training.cuda_graph_scope") == "[attn, moe_router, moe_preprocess]");
  CHECK(g.find("training.cuda_graphs") == nullptr);
  CHECK(im::import_megatron(moe + "--cuda-graph-impl none", opts(8)).find("training.cuda_graphs") == nullptr);
  CHECK(value(im::import_megatron(moe + "--cuda-graph-impl local", opts(8)), "training.cuda_graphs") == "true");
  CHECK_THROWS_WITH(im::import_megatron(moe + "--moe-token-dispatcher-type scatter", opts(8)),
                    Catch::Contains("--moe-token-dispatcher-type scatter: expected allgather, alltoall or flex"));
  // --window-size on every layer, or all but every N-th with --window-attn-skip-freq N, or by a 0/1 list.
  CHECK(value(im::import_megatron(kLlama8bArgs + "--window-size 4096,0", opts(8)), "model.sliding_window.every") == "1");
  const im::Imported w = im::import_megatron(kLlama8bArgs + "--window-size 128,0 --window-attn-skip-freq 2", opts(8));
  CHECK(value(w, "model.sliding_window.tokens") == "128");
  CHECK(value(w, "model.sliding_window.every") == "2");
  CHECK(value(im::import_megatron(kLlama8bArgs + "--window-size 128,0 --window-attn-skip-freq ([1,0,0,0]*8)", opts(8)),
              "model.sliding_window.every") == "4");
  // Megatron-FSDP shards by --data-parallel-sharding-strategy (default optim_grads_params).
  CHECK(value(im::import_megatron(kLlama8bArgs + "--use-megatron-fsdp", opts(8)), "parallelism.zero_stage") == "3");
  CHECK(value(im::import_megatron(kLlama8bArgs + "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", opts(8)),
              "parallelism.zero_stage") == "2");
  CHECK(value(im::import_megatron(kLlama8bArgs + "--use-megatron-fsdp --data-parallel-sharding-strategy optim", opts(8)),
              "parallelism.zero_stage") == "1");
}

TEST_CASE("megatron: uneven splits with virtual pipelines and Megatron rank order and an NVLink domain wider than a host", "[import]") {
  const std::string args = kLlama8bArgs + "--nnodes 2 --nproc-per-node 4 --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 ";
  const im::Imported a = im::import_megatron(args + "--num-layers 30 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split", opts());
  CHECK(value(a, "parallelism.vpp") == "2");
  // (32 + 2) layers over 2 stages = 17, not divisible into 2 chunks: an error, as in Megatron.
  CHECK_THROWS_WITH(im::import_megatron(kLlama8bArgs + "--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
                                                       "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
                                        opts(8)),
                    Catch::Contains("not divisible into 2 model chunks"));
  // 30 + 2 over 2 stages x 2 chunks of 8: chunk c of stage s at c*pp + s, a layer off the first and the last.
  CHECK(value(a, "parallelism.pp_layers") == "[7, 8, 8, 7]");
  const im::Imported l = im::import_megatron(args + "--decoder-last-pipeline-num-layers 4", opts());
  CHECK(value(l, "parallelism.pp_layers") == "[14, 2, 14, 2]");  // the last stage's 4 layers over its 2 chunks
  // Megatron's rank order tp-cp-ep-dp-pp is the loader's default (topologies/placement.hpp): not written.
  CHECK(a.find("network.placement") == nullptr);
  CHECK(value(a, "cluster.gpus_per_node") == "4");
  im::ImportOptions nvl = opts();
  nvl.gpus_per_node = 8;
  CHECK(value(im::import_megatron(args, nvl), "cluster.gpus_per_node") == "8");
}

TEST_CASE("megatron: --pipeline-model-parallel-layout gives pp_layers in model order and the virtual stages",
          "[import]") {
  const im::ImportOptions o = opts(16);
  const std::string args =
      "--num-layers 10 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 "
      "--global-batch-size 16 "
      "--vocab-size 32000 --bf16 --pipeline-model-parallel-size 2 ";
  // Megatron-Core's string form: "(..)*n" then "x*n" unrolled, '|' between stages; 4 stages over pp 2 is vpp 2.
  const im::Imported i = im::import_megatron(args + "--pipeline-model-parallel-layout \"Et*2|(tt|)*2,t*4L\"", o);
  CHECK(value(i, "parallelism.vpp") == "2");
  CHECK(value(i, "parallelism.schedule") == "interleaved");
  CHECK(value(i, "parallelism.pp_layers") == "[2, 2, 2, 4]");
  CHECK(i.find("parallelism.pp_layers")->origin == "--pipeline-model-parallel-layout Et*2|(tt|)*2,t*4L");
  CHECK_FALSE(warned(i, "pipeline-model-parallel-layout"));  // mapped, not "not modelled"
  (void)clustersim::scenarios::load_scenario_string(im::to_yaml(i, {}), "layout.yaml");
  CHECK_THROWS_WITH(im::import_megatron(args + "--pipeline-model-parallel-layout 'Et*4|t*5L'", o),
                    Catch::Contains("the layout places 9 transformer layers but the model has 10"));
  CHECK_THROWS_WITH(im::import_megatron(args + "--pipeline-model-parallel-layout 'Et*2|t*4|t*4L'", o),
                    Catch::Contains("3 stages do not divide over 2 pipeline ranks"));
}

TEST_CASE("megatron: what matters but is not modelled is a warning, never silently dropped", "[import]") {
  const im::Imported i = im::import_megatron(kLlama8bArgs + "--cpu-offloading --recompute-granularity full "
                                                            "--recompute-method block --recompute-num-layers 2 --rampup-batch-size 32 32 1000",
                                             opts(8));
  CHECK(warned(i, "--cpu-offloading"));
  CHECK(warned(i, "--rampup-batch-size"));
  // --recompute-method block --recompute-num-layers 2: the first 2 layers of the stage, modelled now.
  CHECK_FALSE(warned(i, "--recompute-num-layers 2"));
  CHECK(value(i, "training.recompute") == "full");
  CHECK(value(i, "training.recompute_layers") == "2");
  // At least a stage's layers (32 here) is every layer: plain full recompute.
  const im::Imported all = im::import_megatron(kLlama8bArgs + "--recompute-granularity full --recompute-method block "
                                                              "--recompute-num-layers 32", opts(8));
  CHECK(all.find("training.recompute_layers") == nullptr);
  // Counted per model chunk: pp 2 x vpp 2 gives chunks of 8 layers.
  const im::Imported chunked = im::import_megatron(kLlama8bArgs + "--pipeline-model-parallel-size 2 "
                                                                  "--num-layers-per-virtual-pipeline-stage 8 --global-batch-size 8 "
                                                                  "--recompute-granularity full --recompute-method block --recompute-num-layers 8", opts(8));
  CHECK(chunked.find("training.recompute_layers") == nullptr);
  const im::Imported fp8 = im::import_megatron(kLlama8bArgs + "--fp8-format hybrid --fp8-recipe blockwise", opts(8));
  CHECK(value(fp8, "training.precision") == "fp8");
  CHECK(value(fp8, "training.fp8_recipe") == "blockwise");
  CHECK(value(im::import_megatron(kLlama8bArgs + "--fp8-format e4m3 --fp8-recipe mxfp8", opts(8)), "training.precision") == "mxfp8");
}

TEST_CASE("megatron: the attention backend and the fp16 and fp4 precisions", "[import]") {
  auto attention = [](const std::string& flags) { return value(im::import_megatron(kLlama8bArgs + flags, opts(8)), "training.attention_impl"); };
  CHECK(attention("--attention-backend fused") == "cudnn");
  CHECK(attention("--attention-backend flash") == "flash2");
  CHECK(attention("--attention-backend unfused") == "unfused");
  CHECK(attention("--use-flash-attn") == "flash2");
  const im::Imported a = im::import_megatron(kLlama8bArgs + "--attention-backend auto", opts(8));
  CHECK(a.find("training.attention_impl") == nullptr);  // Transformer Engine chooses: the profile's default
  CHECK(warned(a, "attention implementation"));
  const std::string shape = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --vocab-size 32000 ";
  CHECK(value(im::import_megatron(shape + "--fp16", opts(8)), "training.precision") == "fp16");
  CHECK(value(im::import_megatron(shape + "--bf16 --fp4-format e2m1", opts(8)), "training.precision") == "nvfp4");
  const im::Imported fp32 = im::import_megatron(shape, opts(8));
  CHECK(value(fp32, "training.precision") == "fp32");
  CHECK(warned(fp32, "no --bf16 or --fp16"));
}

TEST_CASE("megatron: errors name the file and the flag", "[import]") {
  CHECK_THROWS_WITH(im::import_megatron("--hidden-size 4096 --num-attention-heads 32", opts(8)),
                    Catch::Contains("launch.sh") && Catch::Contains("--num-layers is required"));
  CHECK_THROWS_WITH(im::import_megatron(kLlama8bArgs + "--tensor-model-parallel-size eight", opts(8)),
                    Catch::Contains("--tensor-model-parallel-size: expected an integer, found 'eight'"));
  CHECK_THROWS_WITH(im::import_megatron(kLlama8bArgs, opts(0)), Catch::Contains("--gpus N"));
  CHECK_THROWS_WITH(im::import_megatron("--num-layers 2 --hidden-size 64 --num-attention-heads 2 --seq-length 8 "
                                        "--micro-batch-size 1 --tokenizer-type SentencePieceTokenizer", opts(8)),
                    Catch::Contains("vocabulary size"));
  CHECK_THROWS_WITH(im::import_megatron("echo hello", opts(8)), Catch::Contains("no Megatron-LM model arguments"));
}

TEST_CASE("torchtitan: a job file gives FSDP x TP, op-level recompute and torch.compile", "[import]") {
  const im::Imported i = im::import_torchtitan(input("llama3_8b.toml"), opts(16));
  CHECK(value(i, "model") == "llama3-8b");
  CHECK(value(i, "parallelism.tp") == "2");
  CHECK(value(i, "parallelism.zero_stage") == "3");  // data_parallel_shard_degree = -1 -> 8-way FSDP
  CHECK(value(i, "parallelism.sequence_parallel") == "true");
  CHECK(value(i, "training.global_batch") == "16");  // local batch 2 x 8 DP ranks
  CHECK(value(i, "training.micro_batch") == "2");
  CHECK(value(i, "training.recompute") == "selective");
  CHECK(warned(i, "selective_ac_option"));
  CHECK(value(i, "training.fused_elementwise") == "true");
  CHECK(value(i, "training.tokens") == "131072000");  // 1000 steps x 16 x 8192
  CHECK_THROWS_WITH(im::import_torchtitan(input("llama3_8b.toml"), opts(0)), Catch::Contains("--gpus N"));
  CHECK_THROWS_WITH(im::import_torchtitan("[model]\nname = \"llama3\"\nflavor = \n", opts(8)), Catch::Contains("launch.sh:3:"));
  CHECK_THROWS_WITH(im::import_torchtitan("[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n", opts(8)),
                    Catch::Contains("no clustersim preset") && Catch::Contains("clustersim import hf"));
}

TEST_CASE("torchtitan: every converter name torchtitan has shipped, and unknown converters and keys warned with their line", "[import]") {
  const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
  for (const char* name : {"float8", "quantize.linear.float8", "quantize.dense.float8"}) {
    INFO(name);
    const im::Imported i = im::import_torchtitan(model + "converters = [\"" + name + "\"]\n", opts(8));
    CHECK(value(i, "training.precision") == "fp8");
    CHECK(value(i, "training.fp8_recipe") == "tensorwise");
  }
  for (const char* name : {"mx", "quantize.linear.mx", "quantize.dense.mx"}) {
    INFO(name);
    CHECK(value(im::import_torchtitan(model + "converters = [\"" + name + "\"]\n", opts(8)), "training.precision") == "mxfp8");
  }
  // Settings in the section of the current names.
  const im::Imported row = im::import_torchtitan(model + "converters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
                                                         "recipe_name = \"rowwise\"\n", opts(8));
  CHECK(value(row, "training.fp8_recipe") == "rowwise");
  const im::Imported gw = im::import_torchtitan(model + "converters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
                                                        "recipe_name = \"rowwise_with_gw_hp\"\n", opts(8));
  CHECK(warned(gw, "launch.sh:6: recipe_name = \"rowwise_with_gw_hp\": not modelled, costed as rowwise"));
  CHECK(value(im::import_torchtitan(model + "converters = [\"quantize.linear.mx\"]\n[quantize.linear.mx]\nrecipe_name = \"nvfp4_cutlass\"\n",
                                    opts(8)), "training.precision") == "nvfp4");
  // Expert-only converters: not modelled, said so with the line; BF16 stays.
  const im::Imported moe = im::import_torchtitan(model + "converters = [\"quantize.grouped_mm.float8\"]\n", opts(8));
  CHECK(value(moe, "training.precision") == "bf16");
  CHECK(warned(moe, "launch.sh:4: converter \"quantize.grouped_mm.float8\" quantizes only the MoE expert GEMMs"));
  const im::Imported bad = im::import_torchtitan(model + "converters = [\n  \"quantize.linear.float8\",\n  \"fp6_magic\",\n]\n", opts(8));
  CHECK(warned(bad, "launch.sh:6: [model] converters: \"fp6_magic\" is not a converter torchtitan ships"));
  CHECK(value(bad, "training.precision") == "fp8");
  // A key the importer does not know, and one it models only at torchtitan's default.
  const im::Imported keys = im::import_torchtitan(model + "[parallelism]\nnew_overlap = true\nexpert_tensor_parallel_degree = 1\n"
                                                          "disable_loss_parallel = true\n[optimizer]\nlr = 1.0\n[brand_new]\nx = 1\n", opts(8));
  CHECK(warned(keys, "launch.sh:5: [parallelism] new_overlap = true: not modelled, ignored"));
  CHECK_FALSE(warned(keys, "expert_tensor_parallel_degree"));
  CHECK(warned(keys, "launch.sh:7: [parallelism] disable_loss_parallel = true: not modelled (only false is)"));
  CHECK_FALSE(warned(keys, "lr"));
  CHECK(warned(keys, "[brand_new]: a section the importer does not model"));
}

TEST_CASE("torchtitan: its pipeline split and the float8 and MX converters and an uncompiled model", "[import]") {
  const std::string model = "[model]\nname = \"llama3\"\nflavor = \"70B\"\n";
  const std::string job = model + "[training]\nlocal_batch_size = 8\n";
  // 1F1B over 4 ranks: 80 layers + embedding + output = 82 over 4 stages, the first two one more.
  const im::Imported p = im::import_torchtitan(job + "[parallelism]\npipeline_parallel_degree = 4\n", opts(32));
  CHECK(value(p, "parallelism.schedule") == "1f1b");
  CHECK(value(p, "parallelism.pp_layers") == "[20, 21, 20, 19]");
  CHECK(value(p, "training.micro_batch") == "1");
  CHECK(p.find("parallelism.vpp") == nullptr);
  const im::Imported v = im::import_torchtitan(job + "[parallelism]\npipeline_parallel_degree = 4\n"
                                                     "pipeline_parallel_schedule = \"Interleaved1F1B\"\n", opts(32));
  CHECK(value(v, "parallelism.vpp") == "2");  // two stages per rank by default
  CHECK(value(v, "parallelism.pp_layers") == "[10, 11, 10, 10, 10, 10, 10, 9]");
  CHECK_THROWS_WITH(im::import_torchtitan(job + "[parallelism]\npipeline_parallel_degree = 4\npipeline_parallel_layers_per_stage = 3\n", opts(32)),
                    Catch::Contains("gives 28 stages for 4 ranks and schedule 1F1B"));
  const im::Imported f8 = im::import_torchtitan(model + "converters = [\"float8\"]\n[float8]\nrecipe_name = \"rowwise\"\n", opts(8));
  CHECK(value(f8, "model") == "llama3-70b");
  CHECK(value(f8, "training.precision") == "fp8");
  CHECK(value(f8, "training.fp8_recipe") == "rowwise");
  CHECK(value(im::import_torchtitan(model + "converters = [\"float8\"]\n", opts(8)), "training.fp8_recipe") == "tensorwise");
  // torchao keeps the BF16 input for wgrad, whatever the recipe: the memory of the BF16 copy.
  CHECK(value(f8, "training.fp8_saved_inputs") == "bf16");
  CHECK(value(im::import_torchtitan(model + "converters = [\"float8\"]\n", opts(8)), "training.fp8_saved_inputs") == "bf16");
  CHECK(value(im::import_torchtitan(model + "converters = [\"mx\"]\n", opts(8)), "training.precision") == "mxfp8");
  const im::Imported eager = im::import_torchtitan(job, opts(8));
  CHECK(value(eager, "training.precision") == "bf16");
  CHECK(value(eager, "training.fused_elementwise") == "false");  // no [compile]
  CHECK(value(eager, "training.recompute") == "full");           // torchtitan's default selective_ac_option "2": every 2nd block
  CHECK(value(eager, "training.recompute_layers") == "40");      // of Llama 3 70B's 80
  const im::Imported every = im::import_torchtitan(job + "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"3\"\n", opts(8));
  CHECK(value(every, "training.recompute_layers") == "26");      // blocks 3, 6, ..., 78
  const im::Imported one = im::import_torchtitan(job + "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"1\"\n", opts(8));
  CHECK(one.find("training.recompute_layers") == nullptr);       // every block
  CHECK_THROWS_WITH(im::import_torchtitan(job + "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"x\"\n", opts(8)),
                    Catch::Contains("selective_ac_option = \"x\"") && Catch::Contains("allowed: \"op\" or a whole number"));
}

TEST_CASE("hf: Llama, DeepSeek-V3 (MoE + MLA + MTP) and GPT-OSS (sliding window, head_dim) configs", "[import]") {
  const im::Imported l = im::import_hf(input("llama3_8b_config.json"), opts());
  CHECK(value(l, "model.layers") == "32");
  CHECK(value(l, "model.kv_heads") == "8");
  CHECK(value(l, "model.ffn_hidden") == "14336");
  CHECK(value(l, "model.activation") == "swiglu");
  CHECK(value(l, "model.norm") == "rmsnorm");
  CHECK(value(l, "model.tied_embeddings") == "false");
  CHECK(l.find("model.moe.experts") == nullptr);
  const im::Imported d = im::import_hf(input("deepseek_v3_config.json"), opts());
  CHECK(value(d, "model.moe.experts") == "256");
  CHECK(value(d, "model.moe.expert_ffn_hidden") == "2048");
  CHECK(value(d, "model.ffn_hidden") == "18432");
  CHECK(value(d, "model.moe.shared_experts") == "1");
  CHECK(value(d, "model.moe.dense_layers") == "3");
  CHECK(value(d, "model.mla.q_lora_rank") == "1536");
  CHECK(value(d, "model.mtp_layers") == "1");
  CHECK(d.find("model.kv_heads") == nullptr);
  const im::Imported g = im::import_hf(input("gpt_oss_120b_config.json"), opts());
  CHECK(value(g, "model.head_dim") == "64");
  CHECK(value(g, "model.moe.experts") == "128");
  CHECK(value(g, "model.moe.top_k") == "4");
  CHECK(value(g, "model.sliding_window.tokens") == "128");
  CHECK(value(g, "model.sliding_window.every") == "2");
  CHECK(value(g, "model.bias") == "true");  // GPT-OSS experts always have biases, attention_bias the rest
  CHECK(g.find("model.qkv_bias") == nullptr);
  CHECK_THROWS_WITH(im::import_hf("{\"model_type\": \"llama\",\n \"hidden_size\": [4096 }", opts()), Catch::Contains("launch.sh:2:"));
  CHECK_THROWS_WITH(im::import_hf("{\"model_type\": \"llama\"}", opts()), Catch::Contains("\"num_hidden_layers\" is missing"));
}

TEST_CASE("hf: a Nemotron-H config gives the layer pattern, the Mamba-2 widths and the latent MoE", "[import][mamba]") {
  // The config.json fields of nvidia/NVIDIA-Nemotron-3-Super-120B-A12B (models/presets has the sources).
  const im::Imported n = im::import_hf(input("nemotron3_super_config.json"), opts());
  CHECK(value(n, "model.layer_pattern").find("\"MEMEMEM*EMEMEMEM*") == 0);
  CHECK(value(n, "model.mamba.heads") == "128");
  CHECK(value(n, "model.mamba.state_dim") == "128");
  CHECK(value(n, "model.mamba.groups") == "8");
  CHECK(value(n, "model.moe.latent_dim") == "1024");
  CHECK(value(n, "model.moe.shared_experts") == "2");  // 5376 / 2688
  CHECK(value(n, "model.activation") == "relu2");
  CHECK(value(n, "model.norm") == "rmsnorm");
  CHECK(value(n, "model.mtp_layers") == "1");
  // The imported scenario loads and has the preset's parameters.
  const std::string yaml = im::to_yaml(n, {}) + "hardware: gb200\ncluster: {gpus: 64}\nparallelism: {ep: 64}\n"
                           "training: {seq_len: 8192, global_batch: 64}\n";
  const auto sc = clustersim::scenarios::load_scenario_string(yaml, "imported.yaml");
  CHECK(sc.model.mixer_count(clustersim::models::Mixer::mamba) == 40);
  const auto preset = clustersim::scenarios::load_scenario_string(
      "name: p\nmodel: nemotron3-super-120b-a12b\nhardware: gb200\ncluster: {gpus: 64}\nparallelism: {ep: 64}\n"
      "training: {seq_len: 8192, global_batch: 64}\n", "p.yaml");
  CHECK(clustersim::models::count_params(sc.model, 8192).total ==
        Approx(clustersim::models::count_params(preset.model, 8192).total));
  // layers_block_type (Nemotron 3.5 Lightning) gives the same pattern.
  const std::string list = "{\"model_type\": \"nemotron_h\", \"num_hidden_layers\": 3, \"hidden_size\": 1024, "
                           "\"num_attention_heads\": 8, \"vocab_size\": 1000, \"intermediate_size\": 4096, "
                           "\"layers_block_type\": [\"mamba\", \"mlp\", \"attention\"], \"mamba_num_heads\": 16, "
                           "\"ssm_state_size\": 64}";
  CHECK(value(im::import_hf(list, opts()), "model.layer_pattern") == "\"M-*\"");
}

// An imported config loads, and has the preset's parameters and layer kinds.
static void check_as_preset(const im::Imported& i, const std::string& preset) {
  const std::string tail = "hardware: h100-sxm\ncluster: {gpus: 64}\nparallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 64}\n";
  const auto sc = clustersim::scenarios::load_scenario_string(im::to_yaml(i, {}) + tail, "imported.yaml");
  const auto p = clustersim::scenarios::load_scenario_string("name: p\nmodel: " + preset + "\n" + tail, "p.yaml");
  CHECK(clustersim::models::count_params(sc.model, 4096).total == Approx(clustersim::models::count_params(p.model, 4096).total));
  CHECK(sc.model.layer_pattern == p.model.layer_pattern);
}

TEST_CASE("hf: Qwen3-Next, Kimi Linear and Granite 4.0-H configs give their layer kinds and linear-attention or Mamba widths", "[import][linear]") {
  // The config.json fields of Qwen/Qwen3-Next-80B-A3B, moonshotai/Kimi-Linear-48B-A3B and
  // ibm-granite/granite-4.0-h-small (models/presets has the sources).
  const im::Imported q = im::import_hf(input("qwen3_next_80b_config.json"), opts());
  CHECK(value(q, "model.layer_pattern").find("[linear+moe, linear+moe, linear+moe, attention+moe, ") == 0);
  CHECK(value(q, "model.linear_attention.kind") == "gated_deltanet");
  CHECK(value(q, "model.linear_attention.heads") == "32");
  CHECK(value(q, "model.linear_attention.key_heads") == "16");
  CHECK(value(q, "model.moe.shared_experts") == "1");
  check_as_preset(q, "qwen3-next-80b-a3b");
  const im::Imported k = im::import_hf(input("kimi_linear_48b_config.json"), opts());
  CHECK(value(k, "model.layer_pattern").find("[linear+mlp, linear+moe, linear+moe, attention+moe, ") == 0);
  CHECK(value(k, "model.linear_attention.kind") == "kda");
  CHECK(value(k, "model.moe.top_k") == "8");  // "num_experts_per_token"
  CHECK(k.find("model.moe.dense_layers") == nullptr);  // the pattern says which layer is dense
  check_as_preset(k, "kimi-linear-48b-a3b");
  const im::Imported g = im::import_hf(input("granite_4_h_small_config.json"), opts());
  CHECK(value(g, "model.mamba.heads") == "128");
  CHECK(value(g, "model.mamba.chunk") == "256");
  CHECK(value(g, "model.moe.shared_experts") == "2");  // 1536 / 768
  check_as_preset(g, "granite-4.0-h-small");
  // "position_embedding_type": "nope" (the published Granite 4.0-H configs) is warned, not dropped.
  CHECK_FALSE(warned(g, "position_embedding_type"));
  std::string nope = input("granite_4_h_small_config.json");
  nope.insert(nope.find('{') + 1, "\"position_embedding_type\": \"nope\", ");
  CHECK(warned(im::import_hf(nope, opts()), "\"position_embedding_type\": \"nope\""));
  // A layer_types list whose length is not num_hidden_layers is an error naming the field.
  std::string bad = input("granite_4_h_small_config.json");
  const std::string layers = "\"num_hidden_layers\": 40";
  bad.replace(bad.find(layers), layers.size(), "\"num_hidden_layers\": 41");
  CHECK_THROWS_WITH(im::import_hf(bad, opts()), Catch::Contains("\"layer_types\" lists 40 layers"));
}

TEST_CASE("hf: a DeepSeek-V3.2 config gives the DSA indexer keys", "[import][dsa]") {
  // deepseek_v3_config.json with the DeepseekV32 fields index_n_heads 64, index_head_dim 128, index_topk 2048.
  const im::Imported d = im::import_hf(input("deepseek_v32_config.json"), opts());
  CHECK(value(d, "model.sparse_attention.kind") == "dsa");
  CHECK(value(d, "model.sparse_attention.index_heads") == "64");
  CHECK(value(d, "model.sparse_attention.top_k_tokens") == "2048");
  check_as_preset(d, "deepseek-v3.2");
}

TEST_CASE("a scenario that repeats a key, or names a directory, is an error naming the place", "[import]") {
  CHECK_THROWS_WITH(clustersim::scenarios::load_scenario_string("name: a\nmodel: llama2-7b\nname: b\n", "s.yaml"),
                    Catch::Contains("s.yaml:3:1: name: duplicate key (first at line 1)"));
  CHECK_THROWS_WITH(clustersim::scenarios::load_scenario_string(
                        "name: a\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8, gpus: 16}\n", "s.yaml"),
                    Catch::Contains("s.yaml:4:20: gpus: duplicate key"));
  CHECK_THROWS_WITH(clustersim::scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios"),
                    Catch::Contains("is a directory"));
}

TEST_CASE("megatron: --cpu-offloading with --cpu-offloading-num-layers is activation offloading", "[import]") {
  const im::Imported on = im::import_megatron(kLlama8bArgs + "--cpu-offloading --cpu-offloading-num-layers 8", opts(8));
  CHECK(value(on, "training.activation_offload_layers") == "8");
  CHECK(!warned(on, "cpu-offloading"));
  // Megatron's default count is 0, and the count alone does nothing without the switch.
  CHECK(im::import_megatron(kLlama8bArgs + "--cpu-offloading", opts(8)).find("training.activation_offload_layers") ==
        nullptr);
  CHECK(im::import_megatron(kLlama8bArgs + "--cpu-offloading-num-layers 8", opts(8))
            .find("training.activation_offload_layers") == nullptr);
}

TEST_CASE("megatron: --activation-func-fp8-input-store, unless moe_act recompute keeps the BF16 input", "[import]") {
  const im::Imported on = im::import_megatron(kLlama8bArgs + "--swiglu --activation-func-fp8-input-store", opts(8));
  CHECK(value(on, "training.activation_fp8_input_store") == "true");
  CHECK(!warned(on, "activation-func-fp8-input-store"));
  const im::Imported act = im::import_megatron(kLlama8bArgs +
                                                   "--swiglu --num-experts 8 --activation-func-fp8-input-store "
                                                   "--recompute-granularity selective --recompute-modules moe_act",
                                               opts(8));
  CHECK(act.find("training.activation_fp8_input_store") == nullptr);
  CHECK(warned(act, "moe_act"));
}

TEST_CASE("megatron: --cross-entropy-loss-fusion is a fused loss only with Transformer Engine's impl", "[import]") {
  CHECK(value(im::import_megatron(kLlama8bArgs, opts(8)), "training.cross_entropy") == "fp32");
  CHECK(value(im::import_megatron(kLlama8bArgs + "--cross-entropy-loss-fusion", opts(8)), "training.cross_entropy") ==
        "fp32");
  const im::Imported te =
      im::import_megatron(kLlama8bArgs + "--cross-entropy-loss-fusion --cross-entropy-fusion-impl te", opts(8));
  CHECK(value(te, "training.cross_entropy") == "fused");
  CHECK(!warned(te, "cross-entropy"));
}
TEST_CASE("megatron: --first-last-layers-bf16 keeps Megatron's 1 and 1 blocks unless the counts are given",
          "[import]") {
  const std::string fp8 = kLlama8bArgs + "--fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16 ";
  CHECK(value(im::import_megatron(fp8, opts(8)), "training.bf16_layers") == "{first: 1, last: 1}");
  CHECK(value(im::import_megatron(fp8 + "--num-layers-at-start-in-bf16 0 --num-layers-at-end-in-bf16 14", opts(8)),
              "training.bf16_layers") == "{first: 0, last: 14}");
  // The counts alone do nothing without the switch, and the switch nothing without FP8/FP4.
  CHECK(im::import_megatron(kLlama8bArgs + "--fp8-format hybrid --num-layers-at-end-in-bf16 4", opts(8))
            .find("training.bf16_layers") == nullptr);
  const im::Imported bf16 = im::import_megatron(kLlama8bArgs + "--first-last-layers-bf16", opts(8));
  CHECK(bf16.find("training.bf16_layers") == nullptr);
  CHECK(warned(bf16, "first-last-layers-bf16"));
}
TEST_CASE("megatron: --te-precision-config-file is not read, and the warning names training.module_precision",
          "[import]") {
  const im::Imported r =
      im::import_megatron(kLlama8bArgs + "--fp8-format hybrid --te-precision-config-file te_quant.yaml", opts(8));
  CHECK(warned(r, "training.module_precision"));
  CHECK(r.find("training.module_precision") == nullptr);
}
}}  // namespace CLUSTERSIM_TEST_ID

// The importer corpus: real launch scripts and job files as their projects ship them (tests/data/configs/,
// each with its upstream commit in SOURCES), imported as a user would, run, and compared with the keys
// read off each file by hand (precision, parallelism, model shape). A setting the importer does not know
// must show as a warning that names it, never as a silent default.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <map>
#include <sstream>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kCorpus = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/configs/";

struct Imported {
  std::map<std::string, std::string> keys;  // dotted key -> value, read back from the YAML written
  std::string warnings;                     // stderr of the import
  std::string yaml;                         // the file written
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The YAML's keys as dotted paths (two-space indentation, `key: value  # origin`).
std::map<std::string, std::string> keys_of(const std::string& yaml) {
  std::map<std::string, std::string> out;
  std::vector<std::string> stack;
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#' || line.find(':') == std::string::npos) continue;
    const std::size_t colon = line.find(':');
    stack.resize(indent / 2);
    stack.push_back(line.substr(indent, colon - indent));
    std::string value = line.substr(colon + 1);
    value = value.substr(0, value.find("  #"));
    value.erase(0, value.find_first_not_of(' '));
    std::string path;
    for (const auto& s : stack) path += (path.empty() ? "" : ".") + s;
    if (!value.empty()) out[path] = value;
  }
  return out;
}

Imported import(const std::string& args, const std::string& out_name) {
  const std::string dir = (std::filesystem::temp_directory_path() / "clustersim_import_corpus").string();
  std::filesystem::create_directories(dir);
  const std::string yaml = dir + "/" + out_name;
  const auto r = run_command(kBin + " import " + args + " -o " + yaml + " 2>&1");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  Imported i{{}, r.out, slurp(yaml)};
  i.keys = keys_of(i.yaml);
  i.yaml = yaml;
  return i;
}

void check(const Imported& i, const std::map<std::string, std::string>& expected) {
  for (const auto& [k, v] : expected) {
    INFO(k);
    REQUIRE(i.keys.count(k));
    CHECK(i.keys.at(k) == v);
  }
}

// A number of the JSON report (model_params, …), however it is formatted.
double json_number(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  REQUIRE(at != std::string::npos);
  return std::strtod(json.c_str() + at + key.size() + 4, nullptr);
}

// `clustersim run FILE --json`: its exit code and output.
clustersim::testing::CommandResult run(const Imported& i) { return run_command(kBin + " run " + i.yaml + " --json 2>/dev/null"); }

}  // namespace

TEST_CASE("corpus: Megatron-LM's Llama 3 8B FP8 example imports as FP8 with its vocabulary, and fits", "[import][corpus]") {
  // "--fp8-format hybrid" and "--vocab-size 128256" are single quoted entries of bash arrays, expanded
  // unquoted; the data arguments come from the `if` branch chosen by TOKENIZER_ARG=${3:-"MOCK"}.
  const Imported i = import("megatron " + kCorpus + "megatron/train_llama3_8b_h100_fp8.sh --hardware h100-sxm", "llama3_8b_fp8.yaml");
  check(i, {{"model.layers", "32"}, {"model.hidden", "4096"}, {"model.heads", "32"}, {"model.kv_heads", "8"},
            {"model.ffn_hidden", "14336"}, {"model.vocab", "128256"}, {"model.norm", "rmsnorm"}, {"model.activation", "swiglu"},
            {"cluster.gpus", "8"}, {"parallelism.tp", "1"}, {"parallelism.pp", "1"}, {"parallelism.cp", "1"},
            {"parallelism.zero_stage", "1"}, {"training.precision", "fp8"}, {"training.fp8_recipe", "delayed"},
            {"training.seq_len", "8192"}, {"training.micro_batch", "1"}, {"training.global_batch", "128"}});
  CHECK(i.warnings.find("fp8-format") == std::string::npos);  // mapped, not "not modelled"
  CHECK(i.warnings.find("--fp8-param-gather: not modelled") != std::string::npos);
  const auto r = run(i);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"fits_in_memory\": true") != std::string::npos);
  CHECK(json_number(r.out, "model_params") == 8030261248.0);  // Llama 3.1 8B
}

TEST_CASE("corpus: Megatron-LM's Mixtral 8x7B example imports (NNODES=${SLURM_NNODES:-\"1\"}) and runs", "[import][corpus]") {
  const Imported eight = import("megatron " + kCorpus + "megatron/train_mixtral_8x7b_distributed.sh --hardware h100-sxm", "mixtral8.yaml");
  CHECK(eight.keys.at("cluster.gpus") == "8");  // 8 GPUs per node x the default "1", quotes removed
  // Its layout (EP8 with PP4) cannot fold on one node: the import says so at once, naming the key.
  CHECK(eight.warnings.find("warning: the scenario does not run as imported: ") != std::string::npos);
  CHECK(eight.warnings.find("parallelism.ep: etp·ep = 1·8 = 8 must divide tp·cp·dp = 2") != std::string::npos);
  const Imported i = import("megatron " + kCorpus + "megatron/train_mixtral_8x7b_distributed.sh --hardware h100-sxm --gpus 64", "mixtral.yaml");
  check(i, {{"model.layers", "32"}, {"model.hidden", "4096"}, {"model.kv_heads", "8"}, {"model.vocab", "32000"},
            {"model.moe.experts", "8"}, {"model.moe.top_k", "2"}, {"model.moe.expert_ffn_hidden", "14336"},
            {"cluster.gpus", "64"}, {"parallelism.tp", "1"}, {"parallelism.pp", "4"}, {"parallelism.ep", "8"},
            {"parallelism.zero_stage", "1"}, {"training.precision", "bf16"}, {"training.global_batch", "256"},
            {"training.seq_len", "4096"}, {"training.moe_dispatcher", "alltoall"}});
  CHECK(i.warnings.find("wandb") == std::string::npos);  // the WANDB_API_KEY branch is not taken
  CHECK(i.warnings.find("does not run as imported") == std::string::npos);
  const auto r = run(i);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(json_number(r.out, "model_params") == Approx(46702792704.0).epsilon(1e-8));  // Mixtral 8x7B: 46.7 B
}

TEST_CASE("corpus: Megatron-LM's DeepSeek-V3 Megatron-FSDP example: arguments inside srun bash -c \"…\" of a heredoc", "[import][corpus]") {
  const Imported i = import("megatron " + kCorpus + "megatron/sbatch_mfsdp_deepseek_v3.sh --hardware gb300 --gpus 256", "dsv3.yaml");
  check(i, {{"model.layers", "61"},
            {"model.hidden", "7168"},
            {"model.heads", "128"},
            {"model.vocab", "129280"},
            {"model.moe.experts", "256"},
            {"model.moe.top_k", "8"},
            {"model.moe.expert_ffn_hidden", "2048"},
            {"model.moe.shared_experts", "1"},
            {"model.moe.dense_layers", "3"},
            {"model.mla.q_lora_rank", "1536"},
            {"model.mla.kv_lora_rank", "512"},
            {"model.mtp_layers", "1"},
            {"parallelism.tp", "1"},
            {"parallelism.ep", "8"},
            {"parallelism.zero_stage", "3"},
            {"training.precision", "bf16"},
            {"training.recompute", "selective"},
            {"training.micro_batch", "4"},
            {"training.global_batch", "2048"},
            {"training.moe_dispatcher", "hybridep"}});
  CHECK(i.keys.count("model.head_dim") == 0);  // --kv-channels does not apply to MLA
  CHECK(i.warnings.find("--use-nccl-ub: not modelled") != std::string::npos);
  CHECK(i.warnings.find("--profile") == std::string::npos);  // PROFILE=${PROFILE:-0}: that branch is skipped
  CHECK(run(i).exit_code == 0);
}

TEST_CASE("corpus: torchtitan's Llama 3 job files import with their converters and parallel degrees", "[import][corpus]") {
  const std::string dir = kCorpus + "torchtitan/";
  // 8B and 70B: presets for 64 A100s; converters = ["float8"] is commented out, so BF16 although the
  // [quantize.linear.float8] section is there.
  const Imported l8 = import("torchtitan " + dir + "llama3_8b.toml --hardware a100-80gb --gpus 64", "tt8.yaml");
  check(l8, {{"model", "llama3-8b"}, {"parallelism.tp", "1"}, {"parallelism.zero_stage", "3"}, {"training.precision", "bf16"},
             {"training.seq_len", "8192"}, {"training.micro_batch", "1"}, {"training.global_batch", "64"},
             {"training.recompute", "selective"}});
  CHECK(run(l8).exit_code == 0);
  const Imported l70 = import("torchtitan " + dir + "llama3_70b.toml --hardware a100-80gb --gpus 64", "tt70.yaml");
  check(l70, {{"model", "llama3-70b"}, {"parallelism.tp", "8"}, {"parallelism.zero_stage", "3"}, {"training.precision", "bf16"},
              {"training.global_batch", "64"}, {"training.recompute", "full"}});
  CHECK(run(l70).exit_code == 0);
  // 405B: a preset for 128 H100s, float8 converter, async TP, compiled.
  const Imported l405 = import("torchtitan " + dir + "llama3_405b.toml --hardware h100-sxm --gpus 128", "tt405.yaml");
  check(l405, {{"model", "llama3-405b"}, {"parallelism.tp", "8"}, {"parallelism.tp_comm_overlap", "true"},
               {"parallelism.zero_stage", "3"}, {"training.precision", "fp8"}, {"training.fp8_recipe", "tensorwise"},
               {"training.global_batch", "32"}, {"training.recompute", "full"}, {"training.fused_elementwise", "true"}});
  CHECK(l405.warnings.find("llama3_405b.toml:62: [quantize.linear.float8] enable_fsdp_float8_all_gather = true: not modelled") !=
        std::string::npos);
  const auto r = run(l405);
  INFO(r.out);
  CHECK(r.exit_code == 0);
}

TEST_CASE("corpus: torchtitan's DeepSeek-V3 671B job file imports and runs (it does not fit without expert parallelism)", "[import][corpus]") {
  const Imported i = import("torchtitan " + kCorpus + "torchtitan/deepseek_v3_671b.toml --hardware h100-sxm --gpus 256", "ttds.yaml");
  check(i, {{"model", "deepseek-v3"}, {"parallelism.tp", "1"}, {"parallelism.zero_stage", "3"}, {"training.precision", "bf16"},
            {"training.seq_len", "4096"}, {"training.micro_batch", "4"}, {"training.global_batch", "1024"}});
  CHECK(i.keys.count("parallelism.ep") == 0);  // expert_parallel_degree = 1
  const auto r = run(i);
  CHECK(r.exit_code == 3);  // runs, and reports that 4 x 4096 tokens of all 256 experts per GPU do not fit
}

TEST_CASE("corpus: a setting upstream adds later shows as a warning naming it, not as a silent default", "[import][corpus]") {
  const std::string dir = (std::filesystem::temp_directory_path() / "clustersim_import_corpus").string();
  std::filesystem::create_directories(dir);
  std::string toml = slurp(kCorpus + "torchtitan/llama3_8b.toml");
  toml.replace(toml.find("[parallelism]\n"), 14, "[parallelism]\nfsdp_new_overlap_mode = \"eager\"\n");
  std::ofstream(dir + "/new_key.toml") << toml;
  const auto t = run_command(kBin + " import torchtitan " + dir + "/new_key.toml --gpus 64 -o " + dir + "/nk.yaml 2>&1");
  INFO(t.out);
  CHECK(t.exit_code == 0);
  CHECK(t.out.find("new_key.toml:39: [parallelism] fsdp_new_overlap_mode = \"eager\": not modelled") != std::string::npos);
  std::string sh = slurp(kCorpus + "megatron/train_llama3_8b_h100_fp8.sh");
  sh.replace(sh.find("\"--fp8-param-gather\""), 0, "\"--fp8-new-scaling fancy\"\n        ");
  std::ofstream(dir + "/new_flag.sh") << sh;
  const auto m = run_command(kBin + " import megatron " + dir + "/new_flag.sh -o " + dir + "/nf.yaml 2>&1");
  INFO(m.out);
  CHECK(m.exit_code == 0);
  CHECK(m.out.find("--fp8-new-scaling fancy: not modelled") != std::string::npos);
}

TEST_CASE("corpus: Megatron-LM's Megatron-FSDP Llama 3 8B FP8 and GPT-3 175B examples", "[import][corpus]") {
  const Imported f = import("megatron " + kCorpus + "megatron/train_llama3_8b_fsdp_h100_fp8.sh --hardware h100-sxm", "fsdp8.yaml");
  check(f, {{"model.layers", "32"}, {"model.vocab", "128256"}, {"cluster.gpus", "8"}, {"parallelism.zero_stage", "3"},
            {"training.precision", "fp8"}, {"training.seq_len", "8192"}});
  const auto fr = run(f);
  CHECK(fr.exit_code == 0);
  CHECK(fr.out.find("\"fits_in_memory\": true") != std::string::npos);
  // GPT-3 175B: the GPT-2 vocabulary file is a positional argument of the script, so --vocab is needed
  // (and the error says so without it); 1,024 GPUs for its TP 8 x PP 16.
  const auto no_vocab = run_command(kBin + " import megatron " + kCorpus + "megatron/train_gpt3_175b_distributed.sh 2>&1");
  CHECK(no_vocab.exit_code == 2);
  CHECK(no_vocab.out.find("--vocab N") != std::string::npos);
  const Imported g = import("megatron " + kCorpus + "megatron/train_gpt3_175b_distributed.sh --vocab 50257 --hardware h100-sxm --gpus 1024",
                            "gpt3.yaml");
  check(g, {{"model.layers", "96"}, {"model.hidden", "12288"}, {"model.heads", "96"}, {"model.kv_heads", "96"},
            {"model.ffn_hidden", "49152"}, {"model.position", "learned"}, {"model.norm", "layernorm"}, {"parallelism.tp", "8"},
            {"parallelism.pp", "16"}, {"training.precision", "fp16"}, {"training.seq_len", "2048"}, {"training.global_batch", "1536"}});
  CHECK(run(g).exit_code == 0);
}

// Megatron-Bridge: the repository ships no complete run-config YAML (a run writes run_config.yaml into its
// checkpoint folder), only override files, each merged onto the recipe its script builds; the importer
// takes that recipe with --recipe (SOURCES names the script).
TEST_CASE("corpus: Megatron-Bridge's Llama 3 override files merged onto their recipes import, fit and run",
          "[import][corpus]") {
  const std::string dir = kCorpus + "megatron-bridge/";
  // tutorials/recipes/llama/02_pretrain_with_yaml.py: llama32_1b_pretrain_config with conf/llama32_1b_pretrain.yaml.
  const Imported l1 =
      import("megatron-bridge " + dir +
                 "llama32_1b_pretrain.yaml --recipe llama32_1b_pretrain_config --hardware h100-sxm --gpus 8",
             "mb_llama32_1b.yaml");
  check(l1, {{"model.layers", "16"},
             {"model.hidden", "2048"},
             {"model.heads", "32"},
             {"model.kv_heads", "8"},
             {"model.ffn_hidden", "8192"},
             {"model.vocab", "128256"},
             {"model.tied_embeddings", "true"},
             {"model.activation", "swiglu"},
             {"model.norm", "rmsnorm"},
             {"parallelism.tp", "1"},
             {"parallelism.pp", "1"},
             {"parallelism.cp", "1"},
             {"parallelism.zero_stage", "1"},
             {"training.precision", "bf16"},
             {"training.seq_len", "4096"},
             {"training.micro_batch", "1"},
             {"training.global_batch", "8"},
             {"training.tokens", "3276800"}});
  CHECK(l1.keys.count("model") == 0);  // no shipped preset is Llama 3.2 1B: the model section is written
  CHECK(l1.warnings.find("recipe llama32_1b_pretrain_config: env_vars.PYTORCH_CUDA_ALLOC_CONF") != std::string::npos);
  for (const char* quiet : {"optimizer", "scheduler", "checkpoint", "logger", "rng", "eval_"}) {
    INFO(quiet);
    CHECK(l1.warnings.find(quiet) == std::string::npos);  // learning rate, paths, logging, seed: not a step's cost
  }
  const auto r1 = run(l1);
  INFO(r1.out);
  CHECK(r1.exit_code == 0);
  CHECK(r1.out.find("\"fits_in_memory\": true") != std::string::npos);
  CHECK(json_number(r1.out, "model_params") == 1235814400.0);  // Llama 3.2 1B
  // examples/recipes/llama/pretrain_llama3_8b.py: llama3_8b_pretrain_config (TP1 PP1 CP2) with its override example.
  const Imported l8 = import("megatron-bridge " + dir +
                                 "llama3_8b_pretrain_override_example.yaml --recipe llama3_8b_pretrain_config "
                                 "--hardware h100-sxm --gpus 8",
                             "mb_llama3_8b.yaml");
  check(l8, {{"model", "llama3-8b"},
             {"parallelism.tp", "1"},
             {"parallelism.pp", "1"},
             {"parallelism.cp", "2"},
             {"parallelism.zero_stage", "1"},
             {"training.precision", "bf16"},
             {"training.grad_reduce_dtype", "fp32"},
             {"training.seq_len", "4096"},
             {"training.micro_batch", "1"},
             {"training.global_batch", "8"},
             {"training.cross_entropy", "fused"},
             {"training.tokens", "655360"}});
  CHECK(l8.warnings.find("profiling") == std::string::npos);
  const auto r8 = run(l8);
  INFO(r8.out);
  CHECK(r8.exit_code == 0);
  CHECK(json_number(r8.out, "model_params") == 8030261248.0);  // Llama 3 8B
  // A field upstream adds later is warned with its line, never dropped silently.
  std::string yaml = slurp(dir + "llama3_8b_pretrain_override_example.yaml");
  yaml.replace(yaml.find("model:\n"), 7, "model:\n  fancy_new_overlap: true\n");
  const std::string tmp = (std::filesystem::temp_directory_path() / "clustersim_import_corpus").string();
  std::filesystem::create_directories(tmp);
  std::ofstream(tmp + "/new_field.yaml") << yaml;
  const auto n =
      run_command(kBin + " import megatron-bridge " + tmp +
                  "/new_field.yaml --recipe llama3_8b_pretrain_config --gpus 8 -o " + tmp + "/nf_mb.yaml 2>&1");
  INFO(n.out);
  CHECK(n.exit_code == 0);
  CHECK(
      n.out.find(
          "new_field.yaml:22: model.fancy_new_overlap: true: not a field the importer knows; not modelled, ignored") !=
      std::string::npos);
}

TEST_CASE("corpus: Megatron-Bridge's DeepSeek-V3 performance overrides merged onto its recipe import and run",
          "[import][corpus]") {
  // scripts/performance/run_script.py builds deepseek_v3 pretrain_config(pipeline_parallelism=4,
  // virtual_pipeline_parallelism=1), whose layout for PP 4 the importer takes from the recipe.
  const Imported i = import("megatron-bridge " + kCorpus +
                                "megatron-bridge/deepseek_v3_pretrain_overrides.yaml --recipe "
                                "deepseek_v3_pretrain_config --hardware gb200 --gpus 256",
                            "mb_dsv3.yaml");
  check(i, {{"model", "deepseek-v3"},
            {"parallelism.tp", "2"},
            {"parallelism.pp", "4"},
            {"parallelism.cp", "1"},
            {"parallelism.ep", "64"},
            {"parallelism.etp", "1"},
            {"parallelism.pp_layers", "[16, 16, 16, 13]"},
            {"parallelism.sequence_parallel", "true"},
            {"parallelism.zero_stage", "1"},
            {"training.precision", "bf16"},
            {"training.grad_reduce_dtype", "bf16"},
            {"training.seq_len", "4096"},
            {"training.micro_batch", "1"},
            {"training.global_batch", "2048"},
            {"training.cuda_graphs", "true"},
            {"training.moe_dispatcher", "alltoall"},
            {"training.moe_router_fusion", "true"},
            {"training.tokens", "209715200"}});
  CHECK(i.keys.count("parallelism.vpp") == 0);  // virtual_pipeline_model_parallel_size: 1
  CHECK(i.warnings.find("recipe deepseek_v3_pretrain_config: model.moe_shared_expert_overlap: true: not modelled") !=
        std::string::npos);
  for (const char* quiet :
       {"rerun_state_machine", "profiling", "te_rng_tracker", "enable_megatron_core_experimental", "check_for_nan"}) {
    INFO(quiet);
    CHECK(i.warnings.find(quiet) == std::string::npos);
  }
  const auto r = run(i);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(json_number(r.out, "model_params") == 671026404352.0);  // DeepSeek-V3 with its MTP module
}
}}  // namespace CLUSTERSIM_TEST_ID

"""Python checks exactly what the CLI checks (issue 31, item 2): every bad argument raises clustersim.Error
(a ValueError) with the line the CLI prints before exiting 2, and a result that does not fit is a result
(fits false, the CLI's exit code 3) unless strict=True.

Run by ctest with PYTHONPATH pointing at the built module and CLUSTERSIM_BINARY / CLUSTERSIM_SOURCE_DIR set.
"""
import json
import os
import subprocess
import unittest

import clustersim

BIN = os.environ["CLUSTERSIM_BINARY"]
SRC = os.environ["CLUSTERSIM_SOURCE_DIR"]
MAIN = os.path.join(SRC, "scenarios", "7b_256xh100.yaml")
PLAN = ["--model", "llama3-8b", "--tokens", "1e12", "--days", "30", "--no-progress"]


def cli(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def plan(**kw):
    return clustersim.plan("llama3-8b", "1e12", 30, **kw)


def sweep(**kw):
    return clustersim.sweep(MAIN, **kw)


# (CLI arguments, the same request through Python). Each exits 2 on the CLI.
CASES = [
    (["plan", *PLAN, "--global-batch", "-4"], lambda: plan(global_batch=-4)),
    (["plan", *PLAN, "--global-batch", "0"], lambda: plan(global_batch=0)),
    (["plan", *PLAN, "--gpu-step", "-8"], lambda: plan(gpu_step=-8)),
    (["plan", *PLAN, "--gpu-step", "0"], lambda: plan(gpu_step=0)),
    (["plan", *PLAN, "--max-gpus", "-1"], lambda: plan(max_gpus=-1)),
    (["plan", *PLAN, "--threads", "-1"], lambda: plan(threads=-1)),
    (["plan", *PLAN, "--threads", "5000"], lambda: plan(threads=5000)),
    (["plan", *PLAN, "--top", "-1"], lambda: plan(top=-1)),
    (["plan", *PLAN, "--max-vpp", "0"], lambda: plan(max_vpp=0)),
    (["plan", *PLAN, "--by", "speed"], lambda: plan(by="speed")),
    (["plan", *PLAN, "--schedules", "zb"], lambda: plan(schedules="zb")),
    (["plan", *PLAN, "--hardware", "h100-sxm,h300"], lambda: plan(hardware="h100-sxm,h300")),
    (["plan", *PLAN, "--hardware", "h100-sxm,h100-sxm"], lambda: plan(hardware="h100-sxm,h100-sxm")),
    (["plan", *PLAN, "--batch-tokens", "4M..1M"], lambda: plan(batch_tokens="4M..1M")),
    (["plan", *PLAN, "--confidence", "1.5"], lambda: plan(confidence=1.5)),
    (["plan", *PLAN, "--cost-per-gpu-hour", "-1"], lambda: plan(cost_per_gpu_hour=-1)),
    (["plan", *PLAN, "--fix", "parallelism.tq=3"], lambda: plan(fix={"parallelism.tq": 3})),
    (["plan", "--model", "llama3-8b", "--tokens", "lots", "--days", "30"], lambda: clustersim.plan("llama3-8b", "lots", 30)),
    (["plan", "--model", "llama3-8b", "--tokens", "1e12", "--days", "0"], lambda: clustersim.plan("llama3-8b", "1e12", 0)),
    (["sweep", MAIN, "--vary", "training.micro_batch=1,2", "--threads", "-1", "--no-progress"],
     lambda: sweep(vary={"training.micro_batch": [1, 2]}, threads=-1)),
    (["sweep", MAIN, "--vary", "training.micro_bacth=1,2", "--no-progress"],
     lambda: sweep(vary={"training.micro_bacth": [1, 2]})),
    (["sweep", MAIN, "--vary", "training.micro_batch=1,2", "--set", "training.foo=1", "--no-progress"],
     lambda: sweep(vary={"training.micro_batch": [1, 2]}, set={"training.foo": 1})),
    (["sweep", MAIN, "--vary", "training.micro_batch=", "--no-progress"], lambda: sweep(vary={"training.micro_batch": ""})),
    (["sweep", MAIN, "--auto-parallel", "--schedules", "1f1b,zbh1", "--no-progress"],
     lambda: sweep(auto_parallel=True, schedules="1f1b,zbh1")),
    (["sweep", MAIN, "--auto-parallel", "--set", "cluster.gpus=null", "--no-progress"],
     lambda: sweep(auto_parallel=True, set={"cluster.gpus": None})),
    (["run", MAIN, "--set", "training.micro_batch="], lambda: clustersim.run(MAIN, set={"training.micro_batch": ""})),
    (["run", MAIN, "--set", "training.micro_batch=0"], lambda: clustersim.run(MAIN, set={"training.micro_batch": 0})),
    (["run", MAIN, "--set", "training.global_batch=1000"], lambda: clustersim.run(MAIN, set={"training.global_batch": 1000})),
    (["run", MAIN, "--set", "parallelism.dp=100"], lambda: clustersim.run(MAIN, set={"parallelism.dp": 100})),
    (["run", MAIN, "--set", "model=llama9-7b"], lambda: clustersim.run(MAIN, set={"model": "llama9-7b"})),
    (["run", MAIN, "--set", "cluster.gpus=-8"], lambda: clustersim.run(MAIN, set={"cluster.gpus": -8})),
    (["run", MAIN, "--set", "parallelism.schedule=zb-h2"], lambda: clustersim.run(MAIN, set={"parallelism.schedule": "zb-h2"})),
    (["run", MAIN, "--set", "training.micro_batch=1.5"], lambda: clustersim.run(MAIN, set={"training.micro_batch": 1.5})),
]


class ParityTest(unittest.TestCase):
    def test_error_is_a_value_error_and_the_old_name_remains(self):
        self.assertTrue(issubclass(clustersim.Error, ValueError))
        self.assertIs(clustersim.ScenarioError, clustersim.Error)

    def test_every_cli_bad_input_raises_the_cli_message(self):
        for args, call in CASES:
            with self.subTest(args=" ".join(args)):
                out = cli(*args)
                self.assertEqual(out.returncode, 2, out.stderr)
                self.assertTrue(out.stderr.startswith("error: "), out.stderr)
                with self.assertRaises(clustersim.Error) as caught:
                    call()
                self.assertEqual("error: " + str(caught.exception) + "\n", out.stderr)

    def test_plan_takes_the_comma_list_of_hardware_as_the_cli(self):
        args = ["--model", "gpt3-1.3b", "--tokens", "3e11", "--days", "30", "--max-gpus", "16", "--threads", "1",
                "--hardware", "b200,h100-sxm", "--fix", "parallelism.tp=1", "--fix", "parallelism.pp=1",
                "--fix", "parallelism.cp=1", "--fix", "parallelism.zero_stage=1"]
        out = cli("plan", *args, "--json", "--no-progress")
        self.assertEqual(out.returncode, 0, out.stderr)
        fix = {"parallelism.tp": 1, "parallelism.pp": 1, "parallelism.cp": 1, "parallelism.zero_stage": 1}
        got = clustersim.plan("gpt3-1.3b", "3e11", 30, hardware="b200,h100-sxm", max_gpus=16, threads=1, fix=fix)
        self.assertEqual(got, json.loads(out.stdout))
        self.assertEqual(got["hardware"], ["b200", "h100-sxm"])
        self.assertTrue(got["fits"])

    def test_a_plan_that_does_not_fit_is_a_result_unless_strict(self):
        args = ["--model", "llama3-70b", "--tokens", "1e12", "--days", "3000", "--max-gpus", "8", "--threads", "1"]
        out = cli("plan", *args, "--json", "--no-progress")
        self.assertEqual(out.returncode, 3, out.stderr)
        got = clustersim.plan("llama3-70b", "1e12", 3000, max_gpus=8, threads=1)
        self.assertEqual(got, json.loads(out.stdout))
        self.assertFalse(got["fits"])
        with self.assertRaisesRegex(clustersim.Error, "^no plan meets 3000 days$"):
            clustersim.plan("llama3-70b", "1e12", 3000, max_gpus=8, threads=1, strict=True)

    def test_a_scenario_that_does_not_fit_is_a_result_unless_strict(self):
        out = cli("run", MAIN, "--json", "--set", "parallelism.zero_stage=0", "--set", "training.micro_batch=4")
        self.assertEqual(out.returncode, 3)
        sets = {"parallelism.zero_stage": 0, "training.micro_batch": 4}
        self.assertEqual(clustersim.run(MAIN, set=sets), json.loads(out.stdout))
        self.assertFalse(json.loads(out.stdout)["fits_in_memory"])
        with self.assertRaises(clustersim.Error) as caught:
            clustersim.run(MAIN, set=sets, strict=True)
        self.assertEqual("error: " + str(caught.exception) + "\n", out.stderr)
        self.assertTrue(clustersim.run(MAIN, strict=True)["fits_in_memory"])


if __name__ == "__main__":
    unittest.main(verbosity=2)

"""The clustersim Python module against the CLI: the same library calls must give the same objects.

Run by ctest with PYTHONPATH pointing at the built module and CLUSTERSIM_BINARY / CLUSTERSIM_SOURCE_DIR set.
"""
import csv
import glob
import io
import json
import os
import subprocess
import unittest

import clustersim

BIN = os.environ["CLUSTERSIM_BINARY"]
SRC = os.environ["CLUSTERSIM_SOURCE_DIR"]
MAIN = os.path.join(SRC, "scenarios", "7b_256xh100.yaml")

# scenarios/7b_256xh100.yaml written as a dict.
MAIN_DICT = {
    "name": "Llama-2 7B on 256x H100",
    "model": "llama2-7b",
    "hardware": "h100-sxm",
    "cluster": {"gpus": 256, "gpus_per_node": 8},
    "parallelism": {"tp": 1, "pp": 1, "dp": 256, "zero_stage": 1},
    "training": {"seq_len": 4096, "global_batch": 1024, "micro_batch": 1, "precision": "bf16",
                 "recompute": "none", "flash_attention": True, "overlap_grad_reduce": True, "tokens": 1.0e12},
}


def cli(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


class RunTest(unittest.TestCase):
    def test_every_shipped_scenario_equals_run_json(self):
        scenarios = sorted(glob.glob(os.path.join(SRC, "scenarios", "*.yaml")))
        self.assertGreaterEqual(len(scenarios), 4)
        for path in scenarios:
            with self.subTest(path=path):
                out = cli("run", path, "--json")
                self.assertIn(out.returncode, (0, 3), out.stderr)  # 3: the plan does not fit, report still printed
                self.assertEqual(clustersim.run(path), json.loads(out.stdout))

    def test_overrides_and_explain_equal_the_cli(self):
        out = cli("run", MAIN, "--json", "--explain", "--set", "training.micro_batch=2")
        self.assertEqual(out.returncode, 0, out.stderr)
        got = clustersim.run(MAIN, set={"training.micro_batch": 2}, explain=True)
        self.assertEqual(got, json.loads(out.stdout))
        self.assertIn("waterfall", got["explain"])

    def test_error_band_keys(self):
        r = clustersim.run(MAIN)
        self.assertLess(r["step_time_s_low"], r["step_time_s_high"])
        self.assertLess(r["mfu_low"], r["mfu_high"])
        self.assertAlmostEqual(r["mfu_low"] * r["step_time_s_high"], r["mfu"] * r["step_time_s"], delta=1e-9)
        self.assertGreaterEqual(r["error_band"]["rows"], 8)
        self.assertEqual(r["error_band"]["confidence"], 0.68)

    def test_a_dict_is_a_scenario(self):
        from_dict = clustersim.run(MAIN_DICT)
        from_file = clustersim.run(MAIN)
        self.assertEqual(from_dict, from_file)
        self.assertEqual(clustersim.run(MAIN_DICT, set={"parallelism.zero_stage": 0})["fits_in_memory"], False)

    def test_errors_raise_scenario_error_with_the_cli_message(self):
        out = cli("run", MAIN, "--set", "training.micro_batch=0")
        self.assertEqual(out.returncode, 2)
        with self.assertRaises(clustersim.ScenarioError) as caught:
            clustersim.run(MAIN, set={"training.micro_batch": 0})
        self.assertEqual("error: " + str(caught.exception) + "\n", out.stderr)
        with self.assertRaises(clustersim.ScenarioError):
            clustersim.run({"name": "x", "model": "llama2-7b"})
        with self.assertRaises(TypeError):
            clustersim.run(42)


class StudiesTest(unittest.TestCase):
    def test_explain_validate_and_plan_equal_the_cli(self):
        out = cli("run", MAIN, "--explain", "--json")
        self.assertEqual(clustersim.explain(MAIN), json.loads(out.stdout)["explain"])
        out = cli("validate", "--json", "--source", "MBRIDGE")
        self.assertEqual(out.returncode, 0, out.stderr)
        mbridge = clustersim.validate(source="MBRIDGE")
        self.assertEqual(mbridge, json.loads(out.stdout))
        # Megatron-Bridge's dense rows (25.11, 26.02) are all in the held-out split by source and date.
        self.assertEqual(mbridge["holdout_split"]["headline"]["count"], mbridge["overall"]["headline"]["count"])
        self.assertTrue(all(r["holdout"] for r in mbridge["rows"]))
        out = cli("validate", "--json", "--source", "MBRIDGE", "--group-by", "gpu_type")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(clustersim.validate(source="MBRIDGE", group_by="gpu_type"), json.loads(out.stdout))
        with self.assertRaises(clustersim.ScenarioError):
            clustersim.validate(group_by="pipeline")
        args = ["--model", "llama3-8b", "--tokens", "2e11", "--days", "20", "--max-gpus", "64", "--threads", "1",
                "--fix", "parallelism.pp=1", "--fix", "training.recompute=none"]
        out = cli("plan", *args, "--json", "--no-progress")
        self.assertIn(out.returncode, (0, 3), out.stderr)
        fix = {"parallelism.pp": 1, "training.recompute": "none"}
        got = clustersim.plan("llama3-8b", "2e11", 20, max_gpus=64, threads=1, fix=fix)
        self.assertEqual(got, json.loads(out.stdout))
        self.assertEqual(clustersim.plan("llama3-8b", 2e11, 20, max_gpus=64, threads=1, fix=fix), got)
        with self.assertRaises(clustersim.ScenarioError):
            clustersim.plan("llama3-8b", "lots", 20)

    def test_plan_prices_batch_range_and_energy_equal_the_cli(self):
        args = ["--model", "gpt3-1.3b", "--tokens", "3e11", "--days", "30", "--max-gpus", "16", "--threads", "1",
                "--hardware", "b200,h100-sxm", "--cost-per-gpu-hour", "h100-sxm=2.5,b200=5", "--batch-tokens", "1M..4M",
                "--pue", "1.3", "--by", "days", "--fix", "parallelism.tp=1", "--fix", "parallelism.pp=1",
                "--fix", "parallelism.cp=1", "--fix", "parallelism.zero_stage=1"]
        out = cli("plan", *args, "--json", "--no-progress")
        self.assertEqual(out.returncode, 0, out.stderr)
        fix = {"parallelism.tp": 1, "parallelism.pp": 1, "parallelism.cp": 1, "parallelism.zero_stage": 1}
        got = clustersim.plan("gpt3-1.3b", "3e11", 30, hardware=["h100-sxm", "b200"], max_gpus=16, threads=1, fix=fix,
                              cost_per_gpu_hour={"h100-sxm": 2.5, "b200": 5}, batch_tokens="1M..4M", pue=1.3, by="days")
        self.assertEqual(got, json.loads(out.stdout))
        self.assertEqual(got["global_batches_searched"], [256, 384, 512, 768, 1024])
        self.assertTrue(all(p["energy_mwh"] > 0 and p["total_cost_usd"] > p["gpu_cost_usd"] for p in got["cheapest"]))


class SweepTest(unittest.TestCase):
    def test_rows_equal_the_cli_csv(self):
        out_csv = os.path.join(os.environ.get("TMPDIR", "/tmp"), "clustersim_py_sweep.csv")
        out = cli("sweep", MAIN, "--vary", "training.micro_batch=1,2,4", "--vary", "cluster.gpus=64..256",
                  "--set", "parallelism.dp=null", "--csv", out_csv, "--top", "0", "--no-progress")
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(out_csv) as f:
            expected = list(csv.DictReader(f))
        rows = clustersim.sweep(MAIN, vary={"training.micro_batch": [1, 2, 4], "cluster.gpus": "64..256"},
                                set={"parallelism.dp": None})
        self.assert_rows_equal(rows, expected)

    def test_auto_parallel_searches_ep_and_etp_for_moe_as_the_cli(self):
        # One code path (studies::sweep_space_for): a MoE model's auto-parallel grid has ep / etp.
        moe = os.path.join(SRC, "scenarios", "gpt_oss_120b_64xh100.yaml")
        fixed = {"parallelism.tp": 1, "parallelism.pp": 1, "parallelism.cp": 1, "parallelism.zero_stage": 1,
                 "training.micro_batch": 1, "training.recompute": "full"}
        out_csv = os.path.join(os.environ.get("TMPDIR", "/tmp"), "clustersim_py_sweep_moe.csv")
        args = [a for k, v in fixed.items() for a in ("--set", f"{k}={v}")]
        out = cli("sweep", moe, "--auto-parallel", *args, "--csv", out_csv, "--top", "0", "--no-progress")
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(out_csv) as f:
            expected = list(csv.DictReader(f))
        rows = clustersim.sweep(moe, auto_parallel=True, set=fixed)
        self.assert_rows_equal(rows, expected)
        self.assertEqual([r["parallelism.ep"] for r in rows], [1, 2, 4, 8, 16, 32, 64])
        self.assertTrue(any(r["status"] == "ok" for r in rows))

    def test_schedules_restrict_the_auto_parallel_grid_as_the_cli(self):
        # Llama 2 7B on 8 GPUs at pp 8: 1f1b and zb-h1 at vpp 1, interleaved at vpp 2 and 4.
        fixed = {"cluster.gpus": 8, "training.global_batch": 8, "parallelism.tp": 1, "parallelism.pp": 8,
                 "parallelism.cp": 1, "parallelism.zero_stage": 0, "training.micro_batch": 1,
                 "training.recompute": "none", "parallelism.dp": None}
        args = [a for k, v in fixed.items() for a in ("--set", f"{k}={'null' if v is None else v}")]
        out_csv = os.path.join(os.environ.get("TMPDIR", "/tmp"), "clustersim_py_sweep_zb.csv")
        out = cli("sweep", MAIN, "--auto-parallel", "--schedules", "zb-h1,interleaved", *args, "--csv", out_csv,
                  "--top", "0", "--no-progress")
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(out_csv) as f:
            expected = list(csv.DictReader(f))
        rows = clustersim.sweep(MAIN, auto_parallel=True, set=fixed, schedules=["zb-h1", "interleaved"])
        self.assert_rows_equal(rows, expected)
        self.assertEqual([r["parallelism.schedule"] for r in rows], ["zb-h1", "interleaved", "interleaved"])
        with self.assertRaisesRegex(clustersim.ScenarioError, "unknown schedule 'zb'"):
            clustersim.sweep(MAIN, auto_parallel=True, set=fixed, schedules="zb")

    def assert_rows_equal(self, rows, expected):
        self.assertEqual(len(rows), len(expected))
        for got, want in zip(rows, expected):
            self.assertEqual(set(got), set(want))
            for key, text in want.items():
                value = got[key]
                if value is None:
                    self.assertEqual(text, "")
                elif isinstance(value, (bool, str)):
                    self.assertEqual(str(value).lower() if isinstance(value, bool) else value, text)
                else:
                    self.assertEqual(value, type(value)(text), key)

    def test_as_frame(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                clustersim.sweep(MAIN, vary={"training.micro_batch": [1, 2]}, as_frame=True)
            return
        frame = clustersim.sweep(MAIN, vary={"training.micro_batch": [1, 2]}, as_frame=True)
        self.assertEqual(len(frame), 2)
        self.assertIn("mfu", frame.columns)


if __name__ == "__main__":
    unittest.main(verbosity=2)

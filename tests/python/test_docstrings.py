"""The Python module's docstrings (help(clustersim.plan), docs/python_reference.md): every parameter of every
function is described, and the defaults they state are those the code applies.

Run by ctest (python_docstrings) with PYTHONPATH pointing at the built module.
"""
import re
import unittest

import clustersim

FUNCTIONS = ["run", "sweep", "explain", "plan", "validate"]


def parameters(fn):
    signature = fn.__doc__.strip().splitlines()[0]
    inside = signature[signature.index("(") + 1:signature.rindex(")")]
    return [p.split(":")[0].strip() for p in inside.split(",") if p.strip()]


class DocstringTest(unittest.TestCase):
    def test_every_parameter_is_described(self):
        for name in FUNCTIONS:
            fn = getattr(clustersim, name)
            body = fn.__doc__.strip().partition("\n")[2]
            self.assertGreater(len(body.splitlines()), 2, name)
            for p in parameters(fn):
                with self.subTest(function=name, parameter=p):
                    self.assertRegex(body, r"\b" + re.escape(p) + r"\b")

    def test_plan_states_the_schedules_it_searches_by_default(self):
        # plan's default search is 1f1b and interleaved; zb-h1 is opt-in (--schedules, about 1.5x the time).
        default = re.search(r"None searches ([a-z0-9\-, ]+)", clustersim.plan.__doc__).group(1).strip().split(", ")
        self.assertNotIn("zb-h1", default)
        self.assertEqual(sorted(default), ["1f1b", "interleaved"])


if __name__ == "__main__":
    unittest.main(verbosity=2)

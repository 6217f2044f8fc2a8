# A lit test format that makes every examples/*.mlir one test, found at run
# time (no RUN lines to keep in sync): the example must parse and verify with
# tile-opt, round-trip through the printer (custom, generic and bytecode form)
# and canonicalize.  Used by test/Examples/lit.local.cfg.  (In a module of its
# own so that lit can pickle it for its worker processes.)
import os
import subprocess

import lit.formats
import lit.Test


class ExamplesFormat(lit.formats.base.TestFormat):
    def __init__(self, examples_dir):
        self.examples_dir = examples_dir

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if not os.path.isdir(self.examples_dir):
            return
        for name in sorted(os.listdir(self.examples_dir)):
            path = os.path.join(self.examples_dir, name)
            if name.endswith(".mlir") and os.path.isfile(path):
                yield lit.Test.Test(testSuite, path_in_suite + (name,),
                                    localConfig, file_path=path)

    def execute(self, test, litConfig):
        tile_opt = os.path.join(test.config.tile_tools_dir, "tile-opt")
        src = test.getFilePath()
        steps = [
            ("parse+verify", [tile_opt, src]),
            ("generic round-trip", [tile_opt, "--mlir-print-op-generic", src]),
            ("bytecode round-trip", [tile_opt, "--verify-roundtrip", src]),
            ("canonicalize", [tile_opt, "--canonicalize", src]),
        ]
        log = []
        for what, cmd in steps:
            try:
                p = subprocess.run(cmd, capture_output=True, text=True,
                                   timeout=litConfig.maxIndividualTestTime or 120)
            except subprocess.TimeoutExpired:
                return lit.Test.Result(lit.Test.TIMEOUT, "%s timed out\n" % what)
            log.append("$ %s\n%s%s" % (" ".join(cmd), p.stdout[-2000:], p.stderr))
            if p.returncode != 0:
                return lit.Test.Result(lit.Test.FAIL,
                                       "%s failed:\n%s" % (what, "\n".join(log)))
            # The printed form must parse again.
            if what in ("parse+verify", "generic round-trip"):
                q = subprocess.run([tile_opt, "-"], input=p.stdout,
                                   capture_output=True, text=True)
                if q.returncode != 0:
                    return lit.Test.Result(
                        lit.Test.FAIL, "re-parsing the %s output failed:\n%s"
                        % (what, q.stderr))
        return lit.Test.Result(lit.Test.PASS, "\n".join(log))

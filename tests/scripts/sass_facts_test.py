"""scripts/sass_facts.py on cuobjdump -sass listings written the way cuobjdump prints them."""
import io
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import sass_facts  # noqa: E402

HEADER = """
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit

	code for sm_90a
"""


def kernel(name, body):
    lines = [f"\t\tFunction : {name}",
             '\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"']
    for i, ins in enumerate(body):
        lines.append(f"        /*{i * 16:04x}*/                   {ins} ;"
                     f"                 /* 0x000fe20008000f00 */")
        lines.append("                                                  /* 0x000fe20008000f00 */")
    return "\n".join(lines) + "\n"


GOOD_BODY = ["LDC R1, c[0x0][0x28]", "UTMALDG.2D.MULTICAST [UR8], [UR4], UR6, desc[UR10]",
             "@!P0 UTMALDG.2D [UR16], [UR12], desc[UR10]", "SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR5]",
             "WARPGROUP.ARRIVE", "HGMMA.64x256x16.F32.BF16 R24, gdesc[UR8], R24, gsb0",
             "HGMMA.64x256x16.F32.BF16 R24, gdesc[UR12], R24, gsb0", "UCGABAR_ARV", "UCGABAR_WAIT",
             "@!UP0 UTMASTG.2D [UR4], [UR6]", "EXIT"]
OTHER = kernel("_Z21interleave_gate_up_kernelPKvPvmm", ["LDL R2, [R1]", "STL [R1], R2", "EXIT"])
GEMM = "_ZN11fusionscope7kernels6detail18hopper_gemm_kernelILi%dEEEvNS1_10HopperArgsE"


def facts(listing, name="hopper_gemm_kernel"):
    kernels, archs = sass_facts.parse(listing.splitlines(), name)
    out = io.StringIO()
    return kernels, sass_facts.report(kernels, archs, name, out=out), out.getvalue()


class SassFacts(unittest.TestCase):
    def test_counts_each_instruction_of_the_matching_kernels_only(self):
        kernels, failed, text = facts(HEADER + kernel(GEMM % 0, GOOD_BODY) + OTHER +
                                      kernel(GEMM % 1, GOOD_BODY))
        self.assertEqual(failed, [])
        self.assertEqual(len(kernels), 2)
        self.assertIn("2 kernels named *hopper_gemm_kernel* (code for sm_90a architecture)", text)
        rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[2:]
                if line.startswith("  ")}
        self.assertEqual(rows["HGMMA.64x256x16.F32.BF16"], ["2", "4"])
        self.assertEqual(rows["UTMALDG.2D.MULTICAST"], ["2", "2"])
        self.assertEqual(rows["UTMALDG.2D"], ["2", "2"])  # predicated
        self.assertEqual(rows["UTMASTG.2D"], ["2", "2"])  # uniform predicate
        self.assertEqual(rows["UCGABAR_ARV"], ["2", "2"])  # the cluster barrier's two halves
        self.assertEqual(rows["UCGABAR_WAIT"], ["2", "2"])
        self.assertNotIn("LDL", rows)  # the other kernel's spills are not counted
        self.assertNotIn("LDC", rows)  # not a listed family
        self.assertTrue(text.rstrip().endswith("no LDL/STL"))

    def test_a_spilling_kernel_fails(self):
        _, failed, text = facts(HEADER + kernel(GEMM % 0, GOOD_BODY + ["STL.64 [R1+0x8], R4"]))
        self.assertEqual(failed,
                         ["1 local-memory instructions (LDL/STL) in 1 kernels: register spills"])
        self.assertIn("FAILED: 1 local-memory", text)

    def test_spills_allowed_are_counted(self):
        listing = HEADER + kernel(GEMM % 0, GOOD_BODY + ["STL [R1], R4", "LDL.LU R4, [R1]"]) + \
            kernel(GEMM % 1, GOOD_BODY)
        kernels, archs = sass_facts.parse(listing.splitlines(), "hopper_gemm_kernel")
        out = io.StringIO()
        self.assertEqual(sass_facts.report(kernels, archs, "hopper_gemm_kernel", out=out,
                                           allow_spills=True), [])
        self.assertIn("2 local-memory instructions (LDL/STL) in 1 kernels (allowed)",
                      out.getvalue())

    def test_a_kernel_without_a_tma_store_fails(self):
        body = [i for i in GOOD_BODY if "UTMASTG" not in i]
        _, failed, _ = facts(HEADER + kernel(GEMM % 0, GOOD_BODY) + kernel(GEMM % 1, body))
        self.assertEqual(len(failed), 1)
        self.assertIn("1 kernels without UTMASTG", failed[0])

    def test_required_families_are_chosen(self):
        body = [i for i in GOOD_BODY if "UTMA" not in i]  # wgmma fed by plain loads
        kernels, archs = sass_facts.parse((HEADER + kernel(GEMM % 0, body)).splitlines(),
                                          "hopper_gemm_kernel")
        out = io.StringIO()
        self.assertEqual(sass_facts.report(kernels, archs, "hopper_gemm_kernel", ["HGMMA"], out),
                         [])
        self.assertEqual(len(sass_facts.report(kernels, archs, "hopper_gemm_kernel", out=out)), 2)

    def test_no_matching_kernel_fails(self):
        _, failed, _ = facts(HEADER + OTHER)
        self.assertEqual(failed, ["no kernel named *hopper_gemm_kernel*"])

    def test_exit_status_from_a_saved_listing(self):
        with tempfile.TemporaryDirectory() as d:
            good, bad = os.path.join(d, "good.sass"), os.path.join(d, "bad.sass")
            with open(good, "w") as f:
                f.write(HEADER + kernel(GEMM % 0, GOOD_BODY))
            with open(bad, "w") as f:
                f.write(HEADER + kernel(GEMM % 0, GOOD_BODY + ["LDL R3, [R1]"]))
            script = os.path.join(SCRIPTS, "sass_facts.py")

            def run(*args):
                return subprocess.run([sys.executable, script, *args], capture_output=True,
                                      text=True)

            self.assertEqual(run("--from-dump", good).returncode, 0)
            self.assertEqual(run("--from-dump", bad).returncode, 1)
            self.assertEqual(run("--from-dump", bad, "--allow-spills").returncode, 0)
            self.assertEqual(run("--from-dump", good, "--require", "HGMMA,UTMAPF").returncode, 1)
            self.assertEqual(run("--from-dump", good, "--require", "HGMMA,NOPE").returncode, 2)
            missing = run(os.path.join(d, "good.sass"), "--cuobjdump", os.path.join(d, "none"))
            self.assertNotEqual(missing.returncode, 0)
            self.assertIn("not found", missing.stderr)


if __name__ == "__main__":
    unittest.main()

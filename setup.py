"""Builds the C++ core with CMake as the `ninetoothed._core` extension."""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        output_dir = Path(self.get_ext_fullpath(ext.name)).parent.resolve()
        build_dir = Path(self.build_temp).resolve()
        build_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "cmake",
                "-S", str(ROOT),
                "-B", str(build_dir),
                "-DCMAKE_BUILD_TYPE=Release",
                "-DNINETOOTHED_BUILD_TESTS=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}",
                f"-DNINETOOTHED_PYTHON_OUTPUT_DIR={output_dir}",
            ],
            check=True,
        )
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(build_dir), "-j", jobs], check=True)


setup(ext_modules=[CMakeExtension("ninetoothed._core")], cmdclass={"build_ext": CMakeBuild})

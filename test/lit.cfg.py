# -*- Python -*-
# lit configuration of the tile test suite (`ninja check-tile`).

import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "tile"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
# Inputs/, fixtures/: files that tests use; project/: test/Client's CMake
# project; Runtime/: the runtime's gtest suite, run by ctest, not lit;
# E2E/, Metal/: the end-to-end numerics suites, run by pytest.
config.excludes = ["Inputs", "fixtures", "project", "Runtime", "E2E", "Metal", "CMakeLists.txt",
                   "README.txt", "LICENSE.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tile_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", ".so"))
config.substitutions.append(("%tile_src_root", config.tile_src_root))
config.substitutions.append(("%tile_obj_root", config.tile_obj_root))
config.substitutions.append(("%tile_plugin", config.tile_plugin))
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake_cmd", config.cmake_command))
config.substitutions.append(("%make_program", config.make_program))
config.substitutions.append(("%host_cc", config.host_c_compiler))
config.substitutions.append(("%host_cxx", config.host_cxx_compiler))
config.substitutions.append(("%linker_flags", config.linker_flags))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(
    ("%compiler_launcher",
     "-DCMAKE_CXX_COMPILER_LAUNCHER=" + config.compiler_launcher
     if config.compiler_launcher else ""))

# FileCheck, not, count, split-file from the LLVM install; our tools first.
llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "CCACHE_DIR", "CCACHE_DISABLE"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tile_tools_dir, append_path=True)

tool_dirs = [config.tile_tools_dir, config.llvm_tools_dir]
tools = [
    "tile-opt",
    # The stock mlir-opt of the LLVM install (mlir-opt-22), for the plugin.
    ToolSubst("mlir-opt", unresolved="fatal"),
    ToolSubst("tile-capi-test", unresolved="ignore"),
    # Later tools: substituted once they are built.
    ToolSubst("tilec", unresolved="ignore"),
    ToolSubst("tile-run", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

for tool in ("tilec", "tile-run", "tile-capi-test"):
    if lit.util.which(tool, config.tile_tools_dir):
        config.available_features.add(tool)
if os.path.exists(config.tile_plugin):
    config.available_features.add("tile-plugin")
if config.enable_runtime:
    config.available_features.add("tile-runtime")

# TILE_STATIC_TOOLS=ON (the Python wheel, utils/wheel.sh): tilec is linked
# against the static MLIR, LLVM and lld archives, zlib/zstd and libstdc++/
# libgcc, so that it runs on a machine with nothing but glibc (no libMLIR.so,
# libLLVM.so or ld.lld). Included right after find_package(MLIR).
#
# Debian builds its static archives for libLLVM.so: their imported targets
# name the dylib ("LLVM") and shared system libraries (zlib, zstd, z3, ...)
# as link interface. This rewrites those interfaces:
#   LLVM                  -> the static LLVM component libraries, minus the
#                            code generators of targets tile does not compile
#                            for (only X86 hosts, NVPTX and AMDGPU stay);
#   ZLIB::ZLIB, zstd::... -> libz.a, libzstd.a;
#   z3, libxml2, libedit, curl, ffi, pfm, Polly -> dropped (only LLVM parts
#                            tilec never reaches use them: should one be reached,
#                            the link fails with an undefined symbol).
# Nothing is changed when the option is OFF.

set(TILE_STATIC_LLVM_TARGETS X86 NVPTX AMDGPU CACHE STRING
  "LLVM targets whose code generators the static tilec may contain")
set(_tile_other_targets ${LLVM_TARGETS_TO_BUILD})
list(REMOVE_ITEM _tile_other_targets ${TILE_STATIC_LLVM_TARGETS})
list(JOIN _tile_other_targets "|" _tile_other_targets_re)
# lib/Target/AbsentLLVMTargets.cpp: no-op entry points for these.
set(TILE_STATIC_ABSENT_LLVM_TARGETS ${_tile_other_targets})
include(${LLVM_CMAKE_DIR}/LLVMConfigExtensions.cmake OPTIONAL) # Polly
set(TILE_STATIC_ABSENT_LLVM_EXTENSIONS ${LLVM_STATIC_EXTENSIONS})

find_library(TILE_STATIC_ZLIB NAMES libz.a REQUIRED)
find_library(TILE_STATIC_ZSTD NAMES libzstd.a REQUIRED)

# LLVM libraries that stand in for the dylib: every static component but
# other targets' and the few that only LLVM's own tools use.
set(_tile_llvm_static)
foreach(lib ${LLVM_AVAILABLE_LIBS})
  if(NOT TARGET ${lib} OR NOT lib MATCHES "^LLVM")
    continue()
  endif()
  get_target_property(_type ${lib} TYPE)
  if(NOT _type STREQUAL "STATIC_LIBRARY")
    continue()
  endif()
  if(_tile_other_targets_re AND lib MATCHES "^LLVM(${_tile_other_targets_re})[A-Z]")
    continue()
  endif()
  if(lib MATCHES "^LLVM(Exegesis|Debuginfod|LineEditor|WindowsManifest|TableGen|Interpreter|FuzzMutate|Diff|Extensions)")
    continue()
  endif()
  list(APPEND _tile_llvm_static ${lib})
endforeach()

# The linker in-process: tilec links the CPU kernels' shared objects with
# lld's ELF driver instead of running ld.lld (tile/Target/EmbeddedLinker.h); its targets are
# rewritten below like MLIR's.
find_package(LLD REQUIRED CONFIG HINTS "${LLVM_LIBRARY_DIR}/cmake/lld")
include_directories(SYSTEM ${LLD_INCLUDE_DIRS})
# After find_package(LLD): it loads LLVMConfig.cmake again, which sets
# LLVM_LINK_LLVM_DYLIB back to Debian's ON.
set(MLIR_LINK_MLIR_DYLIB OFF)
set(LLVM_LINK_LLVM_DYLIB OFF)

set(_tile_drop_re "(libz3|LibXml2::|LibEdit::|CURL::|FFI::|^pfm$|^Polly)")
get_directory_property(_tile_imported IMPORTED_TARGETS)
foreach(t ${_tile_imported})
  if(NOT t MATCHES "^(MLIR|LLVM|lld)")
    continue()
  endif()
  get_target_property(_libs ${t} INTERFACE_LINK_LIBRARIES)
  if(NOT _libs)
    continue()
  endif()
  set(_new)
  foreach(l ${_libs})
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _bare "${l}")
    if(_bare STREQUAL "LLVM")
      list(APPEND _new ${_tile_llvm_static})
    elseif(_bare STREQUAL "ZLIB::ZLIB")
      list(APPEND _new ${TILE_STATIC_ZLIB})
    elseif(_bare MATCHES "^zstd::")
      list(APPEND _new ${TILE_STATIC_ZSTD})
    elseif(_bare MATCHES "${_tile_drop_re}")
      # dropped, see above
    else()
      list(APPEND _new "${l}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _new)
  set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_new}")
endforeach()

# tile_static_tool(target): static libstdc++/libgcc, unused sections and
# identical code folded away, symbols stripped.
# No RPATH anywhere in this build: a static tool must not look into the build
# machine's directories (an empty RPATH entry would even mean the current
# directory).
set(CMAKE_SKIP_RPATH ON)
function(tile_static_tool target)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc
    -Wl,--gc-sections -Wl,--icf=all -Wl,--as-needed -Wl,--strip-all)
endfunction()

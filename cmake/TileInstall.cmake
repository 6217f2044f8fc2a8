# Install rules and the exported CMake package (find_package(Tile)).
#
#   <prefix>/bin/tile-opt, tilec, tile-run
#   <prefix>/include/tile/**.h, *.td, generated *.inc; <prefix>/include/tile-c
#   <prefix>/lib/libTile*.a, libTileCAPI.so, libTilePlugin.so  (compiler)
#   <prefix>/lib/libtile_runtime.so, include/tile/Runtime/*.h,
#     include/tile/device/cuda/*.cuh (runtime)
#   <prefix>/lib/cmake/tile/{TileConfig,TileConfigVersion}.cmake,
#     TileTargets.cmake (compiler), TileRuntimeTargets.cmake (runtime)
#
# A runtime-only build (TILE_ENABLE_COMPILER=OFF) installs the runtime's
# part alone; TileConfig.cmake then offers Tile::Runtime without needing MLIR.
include(CMakePackageConfigHelpers)

set(TILE_INSTALL_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tile" CACHE STRING
  "Where TileConfig.cmake is installed (relative to the prefix)")

if(TILE_ENABLE_COMPILER)
  # Headers: the sources and the tablegen'd .inc files of the build tree.
  install(DIRECTORY ${TILE_SOURCE_DIR}/include/tile ${TILE_SOURCE_DIR}/include/tile-c
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT tile-headers
    FILES_MATCHING PATTERN "*.h" PATTERN "*.td" PATTERN "*.def"
    PATTERN "CMakeFiles" EXCLUDE)
  install(DIRECTORY ${TILE_BINARY_DIR}/include/tile
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT tile-headers
    FILES_MATCHING PATTERN "*.inc" PATTERN "*.h" PATTERN "*.def"
    PATTERN "CMakeFiles" EXCLUDE)

  # Installed executables (everything under tools/): add_llvm_executable
  # gives them an install RUNPATH of $ORIGIN/../lib only, which misses
  # libMLIR.so / libLLVM.so in ${LLVM_LIBRARY_DIR}.
  function(_tile_fix_tool_rpaths dir)
    get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_t ${_targets})
      get_target_property(_type ${_t} TYPE)
      if(_type STREQUAL "EXECUTABLE")
        set_target_properties(${_t} PROPERTIES
          INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
      endif()
    endforeach()
    get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(_d ${_subdirs})
      _tile_fix_tool_rpaths(${_d})
    endforeach()
  endfunction()
  _tile_fix_tool_rpaths(${TILE_SOURCE_DIR}/tools)

  # Libraries registered by tile_add_mlir_library (and TileCAPI, TilePlugin).
  get_property(_tile_libs GLOBAL PROPERTY TILE_EXPORTED_LIBS)
  list(REMOVE_DUPLICATES _tile_libs)
  # The installed shared objects find libMLIR.so / libLLVM.so where they
  # were built against, and each other next to themselves.
  foreach(_lib ${_tile_libs})
    get_target_property(_type ${_lib} TYPE)
    if(_type STREQUAL "SHARED_LIBRARY" OR _type STREQUAL "MODULE_LIBRARY")
      get_target_property(_rpath ${_lib} INSTALL_RPATH)
      if(NOT _rpath)
        set_target_properties(${_lib} PROPERTIES
          INSTALL_RPATH "\$ORIGIN;${LLVM_LIBRARY_DIR}")
      endif()
    endif()
  endforeach()
  install(TARGETS ${_tile_libs}
    EXPORT TileTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tile-libs
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tile-libs
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tile-libs
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT TileTargets
    NAMESPACE Tile::
    DESTINATION ${TILE_INSTALL_PACKAGE_DIR}
    COMPONENT tile-cmake)
  set(MLIR_PACKAGE_VERSION_REQ "${LLVM_VERSION_MAJOR}.${LLVM_VERSION_MINOR}")
  unset(_tile_libs)
  unset(_lib)
  unset(_type)
  unset(_rpath)
endif()

# The runtime (lib/Runtime: install(TARGETS TileRuntime EXPORT ...)).
if(TARGET TileRuntime AND TILE_RUNTIME_INSTALL)
  install(EXPORT TileRuntimeTargets
    NAMESPACE Tile::
    DESTINATION ${TILE_INSTALL_PACKAGE_DIR}
    COMPONENT tile-cmake)
endif()

# TileConfig.cmake / TileConfigVersion.cmake.
configure_package_config_file(
  ${TILE_SOURCE_DIR}/cmake/TileConfig.cmake.in
  ${TILE_BINARY_DIR}/lib/cmake/tile/TileConfig.cmake
  INSTALL_DESTINATION ${TILE_INSTALL_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${TILE_BINARY_DIR}/lib/cmake/tile/TileConfigVersion.cmake
  VERSION ${TILE_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${TILE_BINARY_DIR}/lib/cmake/tile/TileConfig.cmake
  ${TILE_BINARY_DIR}/lib/cmake/tile/TileConfigVersion.cmake
  DESTINATION ${TILE_INSTALL_PACKAGE_DIR}
  COMPONENT tile-cmake)

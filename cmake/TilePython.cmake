# Decides TILE_ENABLE_PYTHON: ON by default when nanobind is found through the
# Python interpreter in use (Python3_EXECUTABLE / Python_EXECUTABLE, e.g. the
# .venv's that utils/lib/setup.sh passes), or through -Dnanobind_DIR=...
set(_tile_python_default OFF)
if(NOT DEFINED TILE_ENABLE_PYTHON OR TILE_ENABLE_PYTHON)
  if(NOT Python_EXECUTABLE AND Python3_EXECUTABLE)
    set(Python_EXECUTABLE "${Python3_EXECUTABLE}" CACHE FILEPATH "Python used for the tile package")
  endif()
  if(NOT Python_EXECUTABLE)
    find_program(_tile_python NAMES python3 python)
    if(_tile_python)
      set(Python_EXECUTABLE "${_tile_python}" CACHE FILEPATH "Python used for the tile package")
    endif()
  endif()
  if(NOT nanobind_DIR AND Python_EXECUTABLE)
    execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
      OUTPUT_VARIABLE _tile_nb_dir OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _tile_nb_rc ERROR_QUIET)
    if(_tile_nb_rc EQUAL 0 AND EXISTS "${_tile_nb_dir}")
      set(nanobind_DIR "${_tile_nb_dir}" CACHE PATH "nanobind's CMake directory")
    endif()
  endif()
  if(nanobind_DIR AND EXISTS "${nanobind_DIR}")
    set(_tile_python_default ON)
  endif()
endif()
option(TILE_ENABLE_PYTHON
  "Build the tile Python package (needs nanobind and Python headers)"
  ${_tile_python_default})
if(TILE_ENABLE_PYTHON)
  message(STATUS "tile Python package: ON (Python ${Python_EXECUTABLE}, nanobind ${nanobind_DIR})")
else()
  message(STATUS "tile Python package: OFF (no nanobind for ${Python_EXECUTABLE})")
endif()

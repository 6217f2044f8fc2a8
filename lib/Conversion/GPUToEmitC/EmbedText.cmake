# cmake -DOUTPUT=file.inc -DINPUTS="a|b|c" -P EmbedText.cmake
# Writes the concatenation of INPUTS (without their `#pragma once` lines) as
# C++ raw string literals, one per input, adjacent (so they concatenate).
set(_out "")
string(REPLACE "|" ";" INPUTS "${INPUTS}")
foreach(_in ${INPUTS})
  file(READ ${_in} _text)
  string(REPLACE "#pragma once\n" "" _text "${_text}")
  string(APPEND _out "R\"tile_embed(${_text})tile_embed\"\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "${_out}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUTPUT}.tmp ${OUTPUT})

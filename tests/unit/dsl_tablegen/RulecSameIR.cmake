# `rulec --emit=ir` (parse, expand fragments, check, print) gives the same text for
# data/fragments_same_as_yaml.yaml and data/fragments_same_as_yaml.td.
# cmake -DRULEC=path/to/rulec -DDATA=tests/unit/dsl_tablegen/data -P RulecSameIR.cmake
foreach(lang yaml td)
  execute_process(
    COMMAND ${RULEC} --emit=ir -I ${DATA} ${DATA}/fragments_same_as_yaml.${lang}
    OUTPUT_VARIABLE ir_${lang}
    ERROR_VARIABLE err_${lang}
    RESULT_VARIABLE rc_${lang})
  if(NOT rc_${lang} EQUAL 0)
    message(FATAL_ERROR "rulec failed on fragments_same_as_yaml.${lang}:\n${err_${lang}}")
  endif()
endforeach()
if(NOT ir_yaml STREQUAL ir_td)
  message(FATAL_ERROR "rulec --emit=ir differs:\n--- yaml\n${ir_yaml}\n--- td\n${ir_td}")
endif()

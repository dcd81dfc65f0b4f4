# Thin wrappers so every Tandem library links the same way.
#
# All of MLIR and LLVM comes from the one shared libMLIR.so (which itself links
# libLLVM.so): linking the static component archives instead would take minutes
# per tool on a 2-core machine, and mixing the two would register LLVM's
# command-line options twice.

set_property(GLOBAL PROPERTY TANDEM_LIBS "")

# add_tandem_library(name sources... [DEPENDS targets...] [LINK_LIBS libs...])
function(add_tandem_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} MLIR LLVM)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set_property(GLOBAL APPEND PROPERTY TANDEM_LIBS ${name})
endfunction()

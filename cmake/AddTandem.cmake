# Thin wrappers so every Tandem library links, and installs, the same way.
#
# All of MLIR and LLVM comes from the one shared libMLIR.so (which itself links
# libLLVM.so): linking the static component archives instead would take minutes
# per tool on a 2-core machine, and mixing the two would register LLVM's
# command-line options twice.

# add_tandem_library(name sources... [DEPENDS targets...] [LINK_LIBS libs...])
# A compiler library: installed into <prefix>/lib and exported in the Tandem
# CMake package (find_package(Tandem)), with its headers under include/.
function(add_tandem_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} MLIR LLVM)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
    $<INSTALL_INTERFACE:include>)
  # MLIR's package gives its headers as variables, not on its targets: carry
  # them to whoever links Tandem.
  target_include_directories(${name} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS}
                             ${MLIR_INCLUDE_DIRS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  install(TARGETS ${name} EXPORT TandemTargets ARCHIVE DESTINATION lib)
endfunction()

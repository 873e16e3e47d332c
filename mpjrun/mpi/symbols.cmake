# symbols.cmake: what libp2pmpi exports.  One list, libp2pmpi.map (MPI_*,
# PMPI_*, p2p_*), serves both kinds of library:
#   p2pmpi_hide_symbols(target)   a static library: after archiving, its
#                                 internal names are made local
#                                 (hide_symbols.cmake: ld -r, or the
#                                 compiler's -r with P2P_LTO, + objcopy)
#   p2pmpi_export_map(target)     a shared library: the same list as a
#                                 linker version script
set(P2PMPI_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/libp2pmpi.map)

function(p2pmpi_hide_symbols target)
  find_program(P2PMPI_OBJCOPY NAMES objcopy ${CMAKE_OBJCOPY})
  find_program(P2PMPI_LD NAMES ld ${CMAKE_LINKER})
  if(NOT P2PMPI_OBJCOPY OR NOT P2PMPI_LD)
    message(WARNING "no ld/objcopy: libp2pmpi exports its internal names")
    return()
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:${target}>
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/${target}.hide
            -DAR=${CMAKE_AR} -DLD=${P2PMPI_LD} -DOBJCOPY=${P2PMPI_OBJCOPY}
            -DMAP=${P2PMPI_EXPORT_MAP}
            -DLTO_CC=$<$<BOOL:${P2P_LTO}>:${CMAKE_C_COMPILER}>
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/hide_symbols.cmake
    COMMENT "Hiding the internal names of ${target}"
    VERBATIM)
endfunction()

function(p2pmpi_export_map target)
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${P2PMPI_EXPORT_MAP}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
               ${P2PMPI_EXPORT_MAP})
endfunction()

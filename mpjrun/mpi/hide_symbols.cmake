# hide_symbols.cmake: keep libp2pmpi's internal names out of the user's
# link namespace (run by CMake as a script, after the static library is
# archived).
#
# The archive's objects are linked into one relocatable object (ld -r),
# so that every reference between the library's own files is resolved
# inside it; then every global symbol that is not an exported name
# (libp2pmpi.map: MPI_*, PMPI_*, p2p_*) is made local (objcopy
# --keep-global-symbol), and the archive is rewritten with that one
# object.  A user program may then define conn_send, req_new ... of its
# own.  Undefined references (libsodium, libc, sanitizers) stay global.
#
#   cmake -DLIB=libp2pmpi.a -DWORK=dir -DAR=ar -DLD=ld -DOBJCOPY=objcopy
#         -DMAP=libp2pmpi.map [-DLTO_CC=gcc] -P hide_symbols.cmake
foreach(v LIB WORK AR LD OBJCOPY MAP)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "hide_symbols.cmake: ${v} is not set")
  endif()
endforeach()

# The exported patterns, from the version script's global: section.
file(READ ${MAP} map)
string(REGEX MATCH "global:([^}]*)local:" _ "${map}")
string(REGEX MATCHALL "[A-Za-z0-9_]+\\*?;" pats "${CMAKE_MATCH_1}")
set(keep "")
foreach(p IN LISTS pats)
  string(REPLACE ";" "" p "${p}")
  list(APPEND keep "--keep-global-symbol=${p}")
endforeach()
if(NOT keep)
  message(FATAL_ERROR "hide_symbols.cmake: no exported patterns in ${MAP}")
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/objs)
execute_process(COMMAND ${AR} x ${LIB} WORKING_DIRECTORY ${WORK}/objs
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "hide_symbols.cmake: ${AR} x ${LIB} failed")
endif()
file(GLOB objs ${WORK}/objs/*)
list(SORT objs)
if(LTO_CC)
  # The objects carry GCC's intermediate code too (P2P_LTO): the one
  # object is then optimised as a whole, into plain code, in one
  # partition (with several, names shared between them would stay
  # global, such as PMPI_Bcast.part.0, and be kept as exported).
  execute_process(COMMAND ${LTO_CC} -flto=auto -flto-partition=one -g -r -nostdlib
                          -flinker-output=nolto-rel -o ${WORK}/p2pmpi.o ${objs}
                  RESULT_VARIABLE rc)
else()
  execute_process(COMMAND ${LD} -r -o ${WORK}/p2pmpi.o ${objs}
                  RESULT_VARIABLE rc)
endif()
if(rc)
  message(FATAL_ERROR "hide_symbols.cmake: linking the objects into one failed")
endif()
execute_process(COMMAND ${OBJCOPY} --wildcard ${keep} ${WORK}/p2pmpi.o
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "hide_symbols.cmake: ${OBJCOPY} failed")
endif()
file(REMOVE ${LIB})
execute_process(COMMAND ${AR} rcs ${LIB} ${WORK}/p2pmpi.o RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "hide_symbols.cmake: ${AR} rcs ${LIB} failed")
endif()

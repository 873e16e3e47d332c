# make uninstall: cmake -P uninstall.cmake BUILD/install_manifest.txt
# Removes every file the last install wrote (under DESTDIR when set, as
# for the install), then the directories of ours that are left empty.  The
# configuration (.../etc/p2p/p2p.conf) stays: it is the administrator's.
set(manifest ${CMAKE_ARGV3})
if(NOT EXISTS "${manifest}")
  message(FATAL_ERROR "${manifest} not found: nothing was installed from this build")
endif()
file(STRINGS "${manifest}" files)
set(dirs "")
foreach(f IN LISTS files)
  set(f "$ENV{DESTDIR}${f}")   # the manifest lists paths without DESTDIR
  if(f MATCHES "/etc/p2p/" AND NOT f MATCHES "/p2p\\.conf\\.example$")
    message(STATUS "Keeping: ${f}")
    continue()
  endif()
  if(EXISTS "${f}" OR IS_SYMLINK "${f}")
    message(STATUS "Removing: ${f}")
    file(REMOVE "${f}")
  endif()
  get_filename_component(d "${f}" DIRECTORY)
  list(APPEND dirs "${d}")
endforeach()
# Our own directories, if empty now (never the prefix's bin/, lib/...).
list(REMOVE_DUPLICATES dirs)
foreach(d IN LISTS dirs)
  if(d MATCHES "/(include|doc)/p2pmpi$")
    file(GLOB left "${d}/*")
    if(NOT left)
      file(REMOVE_RECURSE "${d}")
    endif()
  endif()
endforeach()

/*
 * Whole transfers on a descriptor, and anonymous temporary files.  Plain
 * system calls only: no allocation, no logging, nothing that exits, so
 * that the MPI library can link it as well as the daemons and p2prun.
 */
#ifndef P2P_FDIO_H
#define P2P_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* Write all n bytes of p to fd, retrying short writes and EINTR; 0, or
 * -1 with errno (EIO if the descriptor stopped taking bytes). */
int fdio_write_all(int fd, const void *p, size_t n);
/* The same at offset off (pwrite), and its reading twin: all n bytes
 * read at off, EIO if the file ends first. */
int fdio_pwrite_all(int fd, const void *p, size_t n, uint64_t off);
int fdio_pread_all(int fd, void *p, size_t n, uint64_t off);

/* A read-write temporary file in dir that nobody else can reach: made
 * with O_TMPFILE where the file system has it, else made as
 * dir/prefixXXXXXX and unlinked at once.  Close-on-exec, and never on
 * fd 0-2 (a program started with stdio closed: callers may take 0 for
 * "no file", and stdio is not theirs).  The descriptor, or -1 with
 * errno. */
int fdio_tmpfile(const char *dir, const char *prefix);

#endif

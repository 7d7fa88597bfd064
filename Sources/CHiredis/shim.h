#ifndef RICHPUSH_CHIREDIS_SHIM_H
#define RICHPUSH_CHIREDIS_SHIM_H
// Debian's libhiredis-dev 0.14.1 installs <hiredis/hiredis.h>; this form works with or without pkg-config.
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stddef.h>
// The connection threads name themselves (ThreadName.swift). glibc declares these two only under
// _GNU_SOURCE, which Swift's Glibc module is not built with; the declarations are glibc's own.
int pthread_setname_np(pthread_t thread, const char *name);
int pthread_getname_np(pthread_t thread, char *name, size_t len);
#endif

#ifndef RICHPUSH_CHIREDIS_SHIM_H
#define RICHPUSH_CHIREDIS_SHIM_H
// Debian's libhiredis-dev 0.14.1 installs <hiredis/hiredis.h>; this form works with or without pkg-config.
#include <hiredis/hiredis.h>
#endif

/*
 * sweepfill/sweepfill.h - the umbrella header: the conventions (api.h, version.h), the cache, the
 * list interface and its ck_queue adapters, the pin, the sweep, the activation protocol over your
 * own list (feature.h) and the registry. The adapters for other containers (list_sysqueue.h,
 * list_urcu.h, list_hash.h) are not included here: include the one you use. Each function's
 * contract is in the comment above its declaration.
 */
#ifndef SWEEPFILL_H
#define SWEEPFILL_H

#include "api.h"
#include "cache.h"
#include "feature.h"
#include "list.h"
#include "pin.h"
#include "registry.h"
#include "sweep.h"

#endif /* SWEEPFILL_H */

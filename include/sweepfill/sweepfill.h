/*
 * sweepfill/sweepfill.h - the umbrella header: everything sweepfill offers.
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

/*
 * lib/cache/users.h - the library's objects that keep a pointer to a cache beyond the call that
 * was given it (a feature, a registry) count themselves in the cache's users, so that
 * swf_cache_destroy refuses (EBUSY, naming the user) while one is alive. Defined in cache.c.
 */
#ifndef SWF_LIB_CACHE_USERS_H
#define SWF_LIB_CACHE_USERS_H

struct swf_cache;

enum swfi_cache_user {
    SWFI_CACHE_USER_FEATURE = 0,  /* swf_feature_create .. swf_feature_destroy */
    SWFI_CACHE_USER_REGISTRY = 1, /* swf_registry_create .. swf_registry_destroy */
    SWFI_CACHE_USERS = 2
};

/* One more user of c, of kind who; lock-free. */
void swfi_cache_use(struct swf_cache *c, enum swfi_cache_user who);

/* That user is gone; lock-free. */
void swfi_cache_unuse(struct swf_cache *c, enum swfi_cache_user who);

#endif /* SWF_LIB_CACHE_USERS_H */

/*
 * Paper VI's repath-trap table (see vguid.h).  A plain array: entries
 * live between a VM's delete and its set, a migration's few seconds, so
 * the table holds the VMs in flight, not the VM population.
 */
#include "traps/vguid.h"

#include <stdlib.h>
#include <string.h>

void vguid_table_init(struct vguid_table *t, uint32_t ttl_s)
{
	memset(t, 0, sizeof(*t));
	t->ttl_s = ttl_s ? ttl_s : VGUID_TTL_DEFAULT_S;
}

void vguid_table_free(struct vguid_table *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}

static size_t index_of(const struct vguid_table *t, uint64_t vguid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].vguid == vguid)
			return i;
	return (size_t)-1;
}

static void drop(struct vguid_table *t, size_t i)
{
	t->e[i] = t->e[--t->n];	/* order is nobody's business */
}

static int stale(const struct vguid_table *t, const struct vguid_ent *e,
		 uint64_t now)
{
	return now > e->when && now - e->when > t->ttl_s;
}

/* Drops the entries older than the TTL; returns how many. */
static size_t vguid_expire(struct vguid_table *t, uint64_t now)
{
	size_t k = 0;
	for (size_t i = 0; i < t->n;) {
		if (stale(t, &t->e[i], now)) {
			drop(t, i);
			k++;
		} else {
			i++;
		}
	}
	t->expired += k;
	return k;
}

int vguid_delete(struct vguid_table *t, uint64_t vguid, uint32_t lid,
		 uint64_t now)
{
	vguid_expire(t, now);
	size_t i = index_of(t, vguid);
	if (i == (size_t)-1) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;
			struct vguid_ent *ne = realloc(t->e, cap * sizeof(*ne));
			if (!ne)
				return -1;
			t->e = ne;
			t->cap = cap;
		}
		i = t->n++;
	}
	t->e[i] = (struct vguid_ent){ .vguid = vguid, .lid = lid, .when = now };
	return 0;
}

const struct vguid_ent *vguid_find(const struct vguid_table *t, uint64_t vguid,
				   uint64_t now)
{
	size_t i = index_of(t, vguid);
	return i == (size_t)-1 || stale(t, &t->e[i], now) ? NULL : &t->e[i];
}

enum vguid_action vguid_set(struct vguid_table *t, uint64_t vguid,
			    uint32_t lid, uint64_t now)
{
	vguid_expire(t, now);
	size_t i = index_of(t, vguid);
	if (i == (size_t)-1)
		return VGUID_CREATED;
	enum vguid_action a = t->e[i].lid != lid ? VGUID_MOVED : VGUID_SAME_LID;
	drop(t, i);
	return a;
}

enum vguid_action vguid_set_signal(struct vguid_table *t, uint64_t vguid,
				   uint32_t lid, uint64_t now, size_t n_hyps,
				   const struct vguid_out *o,
				   struct vguid_stats *st)
{
	enum vguid_action a = vguid_set(t, vguid, lid, now);
	if (a != VGUID_MOVED)
		return a;
	for (size_t h = 0; h < n_hyps; h++) {
		int r = o->notify(o->ctx, h, vguid, lid);
		st->notices++;
		st->reports += r > 0 ? (uint64_t)r : 0;
	}
	return a;
}

const char *vguid_action_name(enum vguid_action a)
{
	return a == VGUID_MOVED ? "moved" : a == VGUID_SAME_LID ? "same-lid" :
	       "created";
}

/*
 * The VM registry (see vm.h) and its file, STATE_DIR/vms:
 *
 *   # comments and blank lines anywhere
 *   ibsmd-vms 1                       the format's version, first
 *   vm NAME vguid=0x.. lid=N hypervisor=0x.. vf=N vf_guid=0x.. weight=N
 *      [to=0xHYP:VF]                  a migration prepared, not committed
 *   vm NAME vguid=0x.. lid=N hypervisor=0x.. weight=N shared=1
 *                                     a shared-LID VM: no VF, lid is its
 *                                     PF's LID when saved
 *
 * One VM per line, in the order they were created.  A file that does not
 * parse is an error naming its line: the daemon refuses to start rather
 * than lose the VMs (and their LIDs) by overwriting it.
 */
#include "sm/model/vm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/clock.h"
#include "sm/model/lids.h"
#include "sm/base/nodemap.h"
#include "sm/base/wfile.h"

#define VM_FILE_VERSION 1

static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= VM_NAME_LEN)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-", *s))
			return 0;
	return 1;
}

int vm_name_ok(const char *name)
{
	return name_ok(name);
}

static int parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/* One "key=value" of a vm line into v; -1 with what is wrong in why. */
static int parse_field(char *tok, struct vm *v, unsigned *seen,
		       const char **why)
{
	static const char *const keys[] = {
		"vguid", "lid", "hypervisor", "vf", "vf_guid", "weight", "to",
		"shared",
	};
	char *eq = strchr(tok, '=');
	if (!eq) {
		*why = "expected key=value";
		return -1;
	}
	*eq = '\0';
	const char *val = eq + 1;
	unsigned k;
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!strcmp(tok, keys[k]))
			break;
	if (k == sizeof(keys) / sizeof(keys[0])) {
		*why = "unknown key";
		return -1;
	}
	if (*seen & (1u << k)) {
		*why = "key given twice";
		return -1;
	}
	*seen |= 1u << k;
	uint64_t x;
	switch (k) {
	case 0:
	case 2:
	case 4:
		if (strncmp(val, "0x", 2) || parse_u64(val + 2, 16, &x) < 0 || !x) {
			*why = "expected a non-zero 0x GUID";
			return -1;
		}
		*(k == 0 ? &v->vguid : k == 2 ? &v->hyp_guid : &v->vf_guid) = x;
		return 0;
	case 1:
		if (parse_u64(val, 10, &x) < 0 || !x || x > LID_UCAST_MAX) {
			*why = "expected a unicast LID";
			return -1;
		}
		v->lid = (uint32_t)x;
		return 0;
	case 3:
		if (parse_u64(val, 10, &x) < 0 || x > 254) {
			*why = "expected a VF number";
			return -1;
		}
		v->vf = (int)x;
		return 0;
	case 5:
		if (parse_u64(val, 10, &x) < 0 || !x || x > VM_WEIGHT_MAX) {
			*why = "expected a weight 1..1000";
			return -1;
		}
		v->weight = (uint16_t)x;
		return 0;
	case 7:
		if (strcmp(val, "1")) {
			*why = "expected shared=1";
			return -1;
		}
		v->shared = 1;
		return 0;
	default: {
		char hyp[32];
		const char *colon = strchr(val, ':');
		if (!colon || (size_t)(colon - val) >= sizeof(hyp) ||
		    strncmp(val, "0x", 2)) {
			*why = "expected to=0xGUID:VF";
			return -1;
		}
		memcpy(hyp, val + 2, (size_t)(colon - val) - 2);
		hyp[colon - val - 2] = '\0';
		if (parse_u64(hyp, 16, &x) < 0 || !x) {
			*why = "expected to=0xGUID:VF";
			return -1;
		}
		v->to_hyp_guid = x;
		if (parse_u64(colon + 1, 10, &x) < 0 || x > 254) {
			*why = "expected to=0xGUID:VF";
			return -1;
		}
		v->to_vf = (int)x;
		v->prepared = 1;
		return 0;
	}
	}
}

/* A "vm ..." line (tokens after "vm"); -1 with the reason in why. */
static int parse_vm(char *rest, struct vm *v, const char **why)
{
	memset(v, 0, sizeof(*v));
	char *save, *tok = strtok_r(rest, " \t\r\n", &save);
	if (!tok || !name_ok(tok)) {
		*why = "expected a VM name (letters, digits, '.', '_', '-')";
		return -1;
	}
	snprintf(v->name, sizeof(v->name), "%s", tok);
	unsigned seen = 0;
	while ((tok = strtok_r(NULL, " \t\r\n", &save)))
		if (parse_field(tok, v, &seen, why) < 0)
			return -1;
	if (v->shared) {
		/* no VF: vf, vf_guid and a prepared move make no sense */
		if ((seen & 0x27) != 0x27 || (seen & 0x58)) {
			*why = "a shared-LID VM has vguid, lid, hypervisor, weight and no vf, vf_guid or to";
			return -1;
		}
		v->vf = -1;
		return 0;
	}
	if ((seen & 0x3f) != 0x3f) {
		*why = "missing one of vguid, lid, hypervisor, vf, vf_guid, weight";
		return -1;
	}
	return 0;
}

int vm_registry_load(struct vm_registry *r, const char *state_dir, char *err,
		     size_t errlen)
{
	memset(r, 0, sizeof(*r));
	rebalance_init(&r->rb, clock_ms());
	snprintf(r->path, sizeof(r->path), "%s/vms", state_dir);
	FILE *fp = rfile_open(r->path, 0, err, errlen);
	if (!fp)
		return errno == ENOENT ? (err[0] = '\0', 0) : -1;
	char line[1024];
	int lineno = 0, version = 0, rc = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		const char *why = NULL;
		char *s = line + strspn(line, " \t\r\n");
		if (!strchr(line, '\n')) {
			why = feof(fp) ? "truncated: the last line has no end"
				       : "line too long";
		} else if (*s == '#' || !*s) {
			continue;
		} else if (!version) {
			unsigned long ver;
			char tail;
			if (sscanf(s, "ibsmd-vms %lu %c", &ver, &tail) != 1)
				why = "expected the header \"ibsmd-vms 1\"";
			else if (ver != VM_FILE_VERSION)
				why = "a format version this ibsmd does not know";
			else
				version = (int)ver;
		} else if (strncmp(s, "vm", 2) || !strchr(" \t", s[2])) {
			why = "expected \"vm NAME key=value...\"";
		} else {
			struct vm v;
			if (parse_vm(s + 3, &v, &why) == 0) {
				v.line = (uint32_t)lineno;
				if (vm_find(r, v.name))
					why = "a second VM of that name";
				else if (vm_find_vguid(r, v.vguid))
					why = "a second VM with that vGUID";
				else if (!vm_add(r, &v)) {
					snprintf(err, errlen, "out of memory");
					rc = -1;	/* the file is not at fault */
					break;
				}
			}
		}
		if (why) {
			snprintf(err, errlen, "%s:%d: %s", r->path, lineno, why);
			rc = -2;
			break;
		}
	}
	if (!rc && ferror(fp)) {
		snprintf(err, errlen, "%s: read error", r->path);
		rc = -1;
	}
	if (!rc && !version) {	/* ibsmd writes the header even with no VM */
		snprintf(err, errlen, "%s:%d: no \"ibsmd-vms %d\" header: empty or truncated",
			 r->path, lineno + 1, VM_FILE_VERSION);
		rc = -2;
	}
	fclose(fp);
	if (rc < 0) {
		char path[sizeof(r->path)];
		memcpy(path, r->path, sizeof(path));
		vm_registry_free(r);
		memcpy(r->path, path, sizeof(path));
	}
	return rc;
}

static void registry_print(const struct vm_registry *r, FILE *fp)
{
	fprintf(fp, "# ibsmd VM registry; written by ibsmd, read at start-up\n"
		    "ibsmd-vms %d\n", VM_FILE_VERSION);
	for (uint32_t i = 0; i < r->n; i++) {
		const struct vm *v = &r->v[i];
		if (v->shared) {
			fprintf(fp, "vm %s vguid=0x%016" PRIx64 " lid=%u hypervisor=0x%016"
				PRIx64 " weight=%u shared=1\n", v->name, v->vguid,
				v->lid, v->hyp_guid, v->weight);
			continue;
		}
		fprintf(fp, "vm %s vguid=0x%016" PRIx64 " lid=%u hypervisor=0x%016"
			PRIx64 " vf=%d vf_guid=0x%016" PRIx64 " weight=%u", v->name,
			v->vguid, v->lid, v->hyp_guid, v->vf, v->vf_guid, v->weight);
		if (v->prepared)
			fprintf(fp, " to=0x%016" PRIx64 ":%d", v->to_hyp_guid,
				v->to_vf);
		fputc('\n', fp);
	}
}

int vm_registry_save(const struct vm_registry *r, char *err, size_t errlen)
{
	struct wfile w;
	if (wfile_open(&w, r->path, err, errlen) < 0)
		return -1;
	registry_print(r, w.fp);
	return wfile_commit(&w, err, errlen);
}

int vm_registry_text(const struct vm_registry *r, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	FILE *fp = open_memstream(text, len);
	if (!fp)
		return -1;
	registry_print(r, fp);
	if (fclose(fp) != 0) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

void vm_registry_free(struct vm_registry *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
	guid_map_free(&r->by_vguid);
	guid_map_free(&r->by_name);
	guid_map_free(&r->per_hyp);
	r->name_clashes = 0;
	rebalance_free(&r->rb);
	if (r->prep) {
		mig_prepared_free(r->prep);
		free(r->prep);
		r->prep = NULL;
	}
}

/* A name's key in by_name: FNV-1a, never 0 (guid_map's empty key). */
static uint64_t name_key(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 0x100000001b3ull;
	return h ? h : 1;
}

struct vm *vm_find(const struct vm_registry *r, const char *name)
{
	uint32_t i = guid_map_get(&r->by_name, name_key(name));
	if (i < r->n && !strcmp(r->v[i].name, name))
		return &r->v[i];
	for (i = 0; r->name_clashes && i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	return NULL;
}

struct vm *vm_find_vguid(const struct vm_registry *r, uint64_t vguid)
{
	uint32_t i = guid_map_get(&r->by_vguid, vguid);
	return i < r->n && r->v[i].vguid == vguid ? &r->v[i] : NULL;
}

/* The VMs on hypervisor hyp_guid. */
static uint32_t vm_count_on(const struct vm_registry *r, uint64_t hyp_guid)
{
	uint32_t c = guid_map_get(&r->per_hyp, hyp_guid);
	return c == FAB_NONE ? 0 : c;
}

/* Adds d (+1 or -1) to hyp_guid's count; 0, or -1 (ENOMEM). */
static int hyp_count(struct vm_registry *r, uint64_t hyp_guid, int d)
{
	uint32_t c = vm_count_on(r, hyp_guid);
	if (!c && d < 0)
		return 0;
	c += (uint32_t)d;
	if (!c) {
		guid_map_del(&r->per_hyp, hyp_guid);
		return 0;
	}
	return guid_map_put(&r->per_hyp, hyp_guid, c);
}

/* Entry i's place in the indexes is i (it moved there, or is new). */
static int index_at(struct vm_registry *r, uint32_t i, int is_new)
{
	const struct vm *v = &r->v[i];
	uint64_t k = name_key(v->name);
	uint32_t held = guid_map_get(&r->by_name, k);
	if (guid_map_put(&r->by_vguid, v->vguid, i) < 0)
		return -1;
	if (is_new && held != FAB_NONE) {
		r->name_clashes++;	/* left to vm_find()'s scan */
		return 0;
	}
	if ((is_new || held == i + 1) && guid_map_put(&r->by_name, k, i) < 0)
		return -1;
	return 0;
}

struct vm *vm_find_vf(const struct vm_registry *r, uint64_t hyp_guid, int vf)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (!r->v[i].shared && r->v[i].hyp_guid == hyp_guid &&
		    r->v[i].vf == vf)
			return &r->v[i];
	return NULL;
}

struct vm *vm_add(struct vm_registry *r, const struct vm *v)
{
	if (vm_find(r, v->name) || vm_find_vguid(r, v->vguid))
		return NULL;
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 16;
		struct vm *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n] = *v;
	if (index_at(r, r->n, 1) < 0 || hyp_count(r, v->hyp_guid, 1) < 0) {
		guid_map_del(&r->by_vguid, v->vguid);
		if (guid_map_get(&r->by_name, name_key(v->name)) == r->n)
			guid_map_del(&r->by_name, name_key(v->name));
		return NULL;
	}
	return &r->v[r->n++];
}

void vm_del(struct vm_registry *r, struct vm *v)
{
	uint32_t i = (uint32_t)(v - r->v);
	if (i >= r->n)
		return;
	guid_map_del(&r->by_vguid, v->vguid);
	if (guid_map_get(&r->by_name, name_key(v->name)) == i)
		guid_map_del(&r->by_name, name_key(v->name));
	hyp_count(r, v->hyp_guid, -1);
	/* kept in creation order: the file lists them as they came */
	memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*v));
	r->n--;
	/* the ones after it moved down one: updating keys never needs memory */
	for (uint32_t j = i; j < r->n; j++)
		index_at(r, j, 0);
}

void vm_move(struct vm_registry *r, struct vm *v, uint64_t hyp_guid)
{
	if (v->hyp_guid == hyp_guid)
		return;
	hyp_count(r, v->hyp_guid, -1);
	v->hyp_guid = hyp_guid;
	if (hyp_count(r, hyp_guid, 1) < 0)
		guid_map_del(&r->per_hyp, hyp_guid);	/* ENOMEM: counted as none */
}

int vm_room(struct vm_registry *r, uint64_t hyp_guid, uint32_t add,
	    uint32_t moved, const struct vm_limits *lim, char *why,
	    size_t whylen)
{
	if (lim->total && (uint64_t)r->n + add > lim->total) {
		r->refused_total++;
		snprintf(why, whylen, "%u VMs, %u more: virtualization.max_vms is %u",
			 r->n, add, lim->total);
		return -1;
	}
	uint32_t here = vm_count_on(r, hyp_guid);
	if (lim->per_hyp && (uint64_t)here + add + moved > lim->per_hyp) {
		r->refused_hyp++;
		snprintf(why, whylen, "%u VMs on hypervisor 0x%016" PRIx64
			 ", %u more: virtualization.max_vms_per_hypervisor is %u",
			 here, hyp_guid, add + moved, lim->per_hyp);
		return -1;
	}
	return 0;
}

uint32_t vm_pf_port(const struct vm *v, const struct fabric *f)
{
	uint32_t hyp = fabric_find_node(f, v->hyp_guid);
	if (!v->shared || hyp == FAB_NONE || !fabric_is_vswitch(f, hyp))
		return FAB_NONE;
	return fabric_vswitch_pf(f, hyp);
}

uint32_t vm_port(const struct vm *v, const struct fabric *f)
{
	if (v->shared)
		return FAB_NONE;
	uint32_t hyp = fabric_find_node(f, v->hyp_guid);
	if (hyp != FAB_NONE && fabric_is_vswitch(f, hyp) && v->vf >= 0) {
		uint32_t pi = fabric_vswitch_vf(f, hyp, (unsigned)v->vf, NULL);
		if (pi != FAB_NONE && f->ports[pi].guid == v->vf_guid)
			return pi;
	}
	return FAB_NONE;
}

uint32_t vm_apply(const struct vm_registry *r, struct fabric *f, int scheme)
{
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		if (!fabric_is_vswitch(f, ni))
			continue;
		unsigned n = fabric_vswitch_nvf(f, ni);
		for (unsigned k = 0; k < n; k++) {
			uint32_t pi = fabric_vswitch_vf(f, ni, k, NULL);
			struct fab_port *p = &f->ports[pi];
			p->vm_weight = 0;
			if (scheme == 0)
				p->flags |= FPORT_NOLID;
			else
				p->flags &= (uint8_t)~FPORT_NOLID;
		}
	}
	uint32_t found = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		uint32_t pi = vm_port(&r->v[i], f);
		if (pi == FAB_NONE)
			continue;
		f->ports[pi].vm_weight = r->v[i].weight ? r->v[i].weight : 1;
		f->ports[pi].flags &= (uint8_t)~FPORT_NOLID;
		found++;
	}
	return found;
}

int vm_registry_lids(const struct vm_registry *r, struct guid_map *m)
{
	if (!r->n)
		return 0;
	/*
	 * Another GUID holding a VM's LID (a stale entry) would win it in
	 * GUID order: such entries go.  vm_lid[lid]: 1 + the VM's index.
	 */
	uint32_t *vm_lid = calloc(LID_UCAST_MAX + 1, sizeof(*vm_lid));
	uint64_t *stale = malloc(((size_t)m->used + 1) * sizeof(*stale));
	if (!vm_lid || !stale) {
		free(vm_lid);
		free(stale);
		return -1;
	}
	/* shared-LID VMs hold no LID of their own: their PF's stays its own */
	for (uint32_t j = 0; j < r->n; j++)
		if (!r->v[j].shared && r->v[j].lid <= LID_UCAST_MAX)
			vm_lid[r->v[j].lid] = j + 1;
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t lid = m->vals[i];
		if (m->keys[i] && lid <= LID_UCAST_MAX && vm_lid[lid] &&
		    m->keys[i] != r->v[vm_lid[lid] - 1].vf_guid)
			stale[k++] = m->keys[i];
	}
	for (uint32_t i = 0; i < k; i++)
		guid_map_del(m, stale[i]);
	free(stale);
	free(vm_lid);
	for (uint32_t i = 0; i < r->n; i++)
		if (!r->v[i].shared &&
		    guid_map_put(m, r->v[i].vf_guid, r->v[i].lid) < 0)
			return -1;
	return 0;
}

/* Does port pi (not a VF) hold lid, in its device or in m? */
static int port_holds(const struct fabric *f, const struct guid_map *m,
		      uint32_t pi, uint32_t lid)
{
	const struct fab_port *p = &f->ports[pi];
	uint32_t hw_top = p->hw_lid + (1u << (p->lmc & 7)) - 1;
	return (p->hw_lid && lid >= p->hw_lid && lid <= hw_top) ||
	       guid_map_get(m, p->guid) == lid;
}

int vm_registry_live_conflict(const struct vm_registry *r, const struct fabric *f,
			      const struct guid_map *m, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < r->n; i++) {
		const struct vm *v = &r->v[i];
		if (!v->line || v->shared || !v->lid)
			continue;
		uint32_t own = vm_port(v, f);
		for (uint32_t pi = 0; pi < f->n_ports; pi++) {
			int vf = -1;
			if (pi == own || !(f->ports[pi].flags & FPORT_PRESENT) ||
			    !fabric_is_endport(f, pi) ||
			    (fabric_vswitch_of(f, pi, &vf) != FAB_NONE && vf >= 0) ||
			    !port_holds(f, m, pi, v->lid))
				continue;
			const struct fab_port *p = &f->ports[pi];
			snprintf(err, errlen, "%s:%u: VM '%s' claims LID %u, which %s \"%s\" port %u (GUID 0x%016" PRIx64 ") holds: the file contradicts the subnet; correct or remove that line (nothing was written)",
				 r->path, v->line, v->name, v->lid,
				 f->nodes[p->node].type == FAB_SWITCH ? "switch" : "node",
				 fabric_node_name(f, p->node), p->num, p->guid);
			return 1;
		}
	}
	return 0;
}

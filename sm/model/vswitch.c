/*
 * vSwitch detection (see vswitch.h): the policy names, the shape confirms.
 */
#include "sm/model/vswitch.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sm/base/log.h"

/* Does one of the policy's vswitches entries name node n? */
static int named(const struct config *c, const struct fab_node *n)
{
	for (int i = 0; i < c->n_vswitches; i++) {
		const char *e = c->vswitches[i];
		if (!strncmp(e, "0x", 2) || !strncmp(e, "0X", 2)) {
			char *end;
			unsigned long long g = strtoull(e + 2, &end, 16);
			if (!*end && g == n->guid)
				return 1;
		} else if (fnmatch(e, n->desc, 0) == 0) {
			return 1;
		}
	}
	return 0;
}

/*
 * A vSwitch's shape: exactly one linked port leads to a switch, every
 * other linked port to a CA (at least one: the PF).
 */
static int vswitch_shape(const struct fabric *f, uint32_t ni)
{
	const struct fab_node *n = &f->nodes[ni];
	unsigned up = 0, cas = 0;
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t r = f->ports[n->first_port + p].remote;
		if (r == FAB_NONE)
			continue;
		if (f->nodes[f->ports[r].node].type == FAB_SWITCH)
			up++;
		else
			cas++;
	}
	return up == 1 && cas >= 1;
}

void vswitch_mark(struct fabric *f, const struct config *c,
		  struct vswitch_report *rep)
{
	struct vswitch_report r = { 0 };
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		struct fab_node *n = &f->nodes[ni];
		if (n->type != FAB_SWITCH)
			continue;
		n->flags &= (uint8_t)~FNODE_VSWITCH;
		int shape = vswitch_shape(f, ni);
		if (named(c, n)) {
			if (shape) {
				n->flags |= FNODE_VSWITCH;
				r.marked++;
				continue;
			}
			r.misshapen++;
			log_warn("switch 0x%016" PRIx64 " \"%s\": named a vSwitch by the policy but not one link to a switch and CAs on the rest: not a vSwitch",
				 n->guid, n->desc);
		} else if (shape && c->n_vswitches == 0) {
			/*
			 * Only proposed: a leaf that lost all but one uplink
			 * has this shape too, and must stay a switch.
			 */
			r.candidates++;
			log_info("switch 0x%016" PRIx64 " \"%s\" looks like a vSwitch (virtualization.vswitches names none)",
				 n->guid, n->desc);
		} else if (shape) {
			r.candidates++;
		}
	}
	if (rep)
		*rep = r;
}

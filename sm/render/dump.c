/*
 * dump_fts-style LFT dump (the ibnetdiscover-style topology dump is
 * sm/base/topodump.c).  Nodes are named as ibnetdiscover --node-name-map
 * names them (sm/base/nodemap.h).
 */
#include "sm/render/dump.h"

#include <inttypes.h>

#include "sm/base/nodemap.h"

static void out_portid(const struct fabric *f, uint32_t ni, FILE *out)
{
	const struct fab_node *n = &f->nodes[ni];
	uint32_t lid = fabric_portp(f, ni, 0)->lid;

	if (n->dr_len == 0 && ni != f->sm_node && lid) {
		fprintf(out, "Lid %u", lid);
		return;
	}
	fprintf(out, "DR path slid 0; dlid 0; 0");
	for (unsigned h = 1; h <= n->dr_len && h <= FAB_MAX_HOPS; h++)
		fprintf(out, ",%u", n->dr_path[h]);
}

static void out_lft(const struct fabric *f, const struct lft_tables *t,
		    uint32_t row, FILE *out)
{
	uint32_t ni = t->sw_node[row];
	const struct fab_node *n = &f->nodes[ni];
	const uint8_t *lft = lft_row(t, row);
	unsigned valid = 0;

	fprintf(out, "Unicast lids [0x0-0x%x] of switch ", t->max_lid);
	out_portid(f, ni, out);
	fprintf(out, " guid 0x%016" PRIx64 " (%s):\n", n->guid,
		fabric_node_name(f, ni));
	fprintf(out, "  Lid  Out   Destination\n       Port     Info \n");
	for (uint32_t lid = 0; lid <= t->max_lid; lid++) {
		if (lft[lid] > n->nports)
			continue;
		fprintf(out, "0x%04x %03u \n", lid, lft[lid]);
		valid++;
	}
	fprintf(out, "%u valid lids dumped \n", valid);
}

int dump_lfts(const struct fabric *f, const struct lft_tables *t, FILE *out)
{
	for (uint32_t ni = 0; ni < f->n_nodes; ni++) {
		if (f->nodes[ni].type != FAB_SWITCH || !t->row_of_node)
			continue;
		uint32_t row = t->row_of_node[ni];
		if (row == FAB_NONE || row >= t->n_sw)
			continue;
		out_lft(f, t, row, out);
	}
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

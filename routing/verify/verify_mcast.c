/*
 * The multicast verifier (routing/verify/verify_mcast.h).
 */
#include "routing/verify/verify_mcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/graph.h"
#include "routing/mctree.h"

#define ROW_MASK(m, r) ((m) + (size_t)(r) * MCAST_MASK_WORDS)

/* Where member port pi attaches (row and MFT port); -1: nowhere. */
static int attach(const struct fabric *f, const struct lft_tables *t,
		  uint32_t pi, uint32_t *row, unsigned *port)
{
	const struct fab_port *p = &f->ports[pi];
	if (!fabric_is_endport(f, pi))
		return -1;
	if (f->nodes[p->node].type == FAB_SWITCH) {
		*row = t->row_of_node[p->node];
		*port = 0;
	} else {
		if (!graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
			return -1;
		*row = t->row_of_node[f->ports[p->remote].node];
		*port = f->ports[p->remote].num;
	}
	return *row == FAB_NONE ? -1 : 0;
}

/*
 * The tree neighbour of row r through its port num, FAB_NONE when the
 * port leads to an end port; sets *bad on a port leading nowhere, to a
 * non-member, or to a switch whose mask lacks the way back.
 */
static uint32_t mask_peer(const struct fabric *f, const struct lft_tables *t,
			  const uint8_t *member, const uint64_t *mask,
			  uint32_t r, unsigned num, char *why, size_t len,
			  int *bad)
{
	const struct fab_node *n = &f->nodes[t->sw_node[r]];
	uint32_t pi = n->first_port + num;
	if (num == 0) {
		if (!member[pi] && !*bad && (*bad = 1))
			snprintf(why, len, "switch \"%s\": port 0 in the mask, not a member",
				 n->desc);
		return FAB_NONE;
	}
	if (num > n->nports || !graph_link_up(f, pi)) {
		if (!*bad && (*bad = 1))
			snprintf(why, len, "switch \"%s\" port %u: in the mask, no usable link",
				 n->desc, num);
		return FAB_NONE;
	}
	const struct fab_port *rp = &f->ports[f->ports[pi].remote];
	if (!graph_peer_is_switch(f, pi)) {
		if (!member[f->ports[pi].remote] && !*bad && (*bad = 1))
			snprintf(why, len, "switch \"%s\" port %u: sent to a non-member end port",
				 n->desc, num);
		return FAB_NONE;
	}
	uint32_t pr = t->row_of_node[rp->node];
	if (pr == FAB_NONE || !mcast_mask_has(ROW_MASK(mask, pr), rp->num)) {
		if (!*bad && (*bad = 1))
			snprintf(why, len, "switch \"%s\" port %u: the switch across has no way back",
				 n->desc, num);
		return FAB_NONE;
	}
	return pr;
}

static int row_in_tree(const uint64_t *m)
{
	for (int w = 0; w < MCAST_MASK_WORDS; w++)
		if (m[w])
			return 1;
	return 0;
}

/*
 * BFS over the mask links from start: seen[], the rows reached, the links
 * counted from both ends.  Returns the rows reached.
 */
static uint32_t tree_walk(const struct fabric *f, const struct lft_tables *t,
			  const uint8_t *member, const uint64_t *mask,
			  uint32_t start, uint8_t *seen, uint32_t *queue,
			  uint64_t *links2, char *why, size_t len, int *bad)
{
	uint32_t head = 0, tail = 0;
	seen[start] = 1;
	queue[tail++] = start;
	while (head < tail) {
		uint32_t u = queue[head++];
		const struct fab_node *n = &f->nodes[t->sw_node[u]];
		for (unsigned num = 0; num <= n->nports; num++) {
			if (!mcast_mask_has(ROW_MASK(mask, u), num))
				continue;
			uint32_t v = mask_peer(f, t, member, mask, u, num, why, len, bad);
			if (v == FAB_NONE)
				continue;
			(*links2)++;
			if (!seen[v]) {
				seen[v] = 1;
				queue[tail++] = v;
			}
		}
	}
	return tail;
}

/* Members attached to a switch of the tree's component but not reached. */
static int check_members(const struct fabric *f, const struct lft_tables *t,
			 const uint32_t *ports, uint32_t n, const uint64_t *mask,
			 uint32_t start, uint32_t *dist, uint32_t *queue,
			 char *why, size_t len)
{
	struct sw_graph g;
	int bad = 0;
	if (sw_graph_build(&g, f, t) < 0)
		return -1;
	if (start != FAB_NONE)
		sw_graph_bfs(&g, &start, 1, dist, queue);
	for (uint32_t i = 0; i < n && !bad; i++) {
		uint32_t row;
		unsigned port;
		if (attach(f, t, ports[i], &row, &port) < 0)
			continue;
		if (start == FAB_NONE) {
			bad = 1;
			snprintf(why, len, "member port 0x%016llx: no tree at all",
				 (unsigned long long)f->ports[ports[i]].guid);
		} else if (dist[row] != UINT32_MAX &&
			   !mcast_mask_has(ROW_MASK(mask, row), port)) {
			bad = 1;
			snprintf(why, len, "member behind \"%s\" port %u: not reached",
				 f->nodes[t->sw_node[row]].desc, port);
		}
	}
	sw_graph_free(&g);
	return bad;
}

int mcast_verify(const struct fabric *f, const struct lft_tables *t,
		 const uint32_t *ports, uint32_t n, const uint64_t *mask,
		 char *why, size_t len)
{
	uint8_t *member = calloc(f->n_ports + 1, 1);
	uint8_t *seen = calloc(t->n_sw + 1, 1);
	uint32_t *queue = calloc((size_t)t->n_sw * 2 + 1, sizeof(*queue));
	int bad = -1;
	if (!member || !seen || !queue)
		goto out;
	bad = 0;
	why[0] = '\0';
	for (uint32_t i = 0; i < n; i++)
		if (ports[i] < f->n_ports)
			member[ports[i]] = 1;
	uint32_t start = FAB_NONE, rows = 0;
	for (uint32_t r = 0; r < t->n_sw; r++)
		if (row_in_tree(ROW_MASK(mask, r))) {
			rows++;
			if (start == FAB_NONE)
				start = r;
		}
	if (start != FAB_NONE) {
		uint64_t links2 = 0;
		uint32_t reached = tree_walk(f, t, member, mask, start, seen, queue,
					     &links2, why, len, &bad);
		if (!bad && reached != rows) {
			bad = 1;
			snprintf(why, len, "%u switches in the masks, %u connected",
				 rows, reached);
		} else if (!bad && links2 / 2 != (uint64_t)rows - 1) {
			bad = 1;
			snprintf(why, len, "%llu links between %u switches: a loop",
				 (unsigned long long)(links2 / 2), rows);
		}
	}
	if (!bad)
		bad = check_members(f, t, ports, n, mask, start, queue + t->n_sw,
				    queue, why, len);
out:
	free(member);
	free(seen);
	free(queue);
	return bad;
}

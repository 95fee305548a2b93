/*
 * dor: dimension-order routing on meshes and tori, deadlock-free on tori
 * by datelines (the scheme of OpenSM's torus-2QoS, doc/current-routing.txt
 * in its sources: the SL records which datelines a path crosses, the VL
 * of a hop is the SL's bit of the hop's dimension).
 *
 * The grid comes from the port numbers, as OpenSM's dor and the meshes
 * and tori of tests/gen/fabgen.py cable it: a switch's ports 2d+1 and
 * 2d+2 lead to its neighbours in dimension d, + and -; a cable joins a
 * +d port to a -d port.  Coordinates are counted from the switch of the
 * lowest GUID; a dimension is a ring (torus) when some line of switches
 * along it closes on itself, its size that ring's length; otherwise it is
 * open (mesh), its size the extent.  A fabric whose cables do not fit
 * (two switches at one place, a cable between different dimensions, a
 * line that closes on one switch and not another of the same length) is
 * refused: it is not a mesh or a torus for dor.
 *
 * The policy may give the grid (route_opts.dor, routing.dor in
 * ibsmd.yaml(5)): the size of each dimension.  The grid found must have
 * them: a ring or an extent of another size (a cabling error, a row of
 * switches gone at an edge) is refused, naming the dimension and both
 * sizes.  A dimension of given size k none of whose lines closes is a
 * mesh when its cables count its coordinates without a wrap and span k,
 * else a ring of k broken in every line (the coordinates wrap modulo k).
 * Without the datelines (dor_opts.no_dateline, for ports that offer one
 * data VL) the rings' wrap-around cables, from k-1 to 0, are left out:
 * every ring is routed as the line it then is, a mesh on VL 0.
 *
 * Routes: from a switch to a destination, the lowest dimension in which
 * their coordinates differ first; in a ring the shorter way (+ on a tie);
 * when a link or switch along that way is missing, the other way round
 * the ring ("the long way", as torus-2QoS does: a ring broken once
 * cannot close a credit loop).  A line broken where no way round it
 * exists (a mesh's, or a ring broken twice) is refused, naming it.
 *
 * Datelines: in a ring of size k the dateline is the cable from k-1 to
 * 0.  A path's SL has bit d set when its segment in dimension d crosses
 * it; every switch port of dimension d sends SL s on VL (s >> d) & 1, the
 * other ports on VL 0.  With shortest segments no ring's channels close
 * a cycle on one VL: a segment that crosses holds the dateline cable and
 * at most k/2 hops, so the crossing segments together leave the cable
 * opposite the dateline unused on VL 1, and the others never use the
 * dateline cable on VL 0; dimension order keeps the dimensions apart.
 * Meshes need VL 0 alone; tori 2 data VLs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/graph.h"

#define DOR_DIMS ROUTE_DOR_DIMS
#define DOR_NONE UINT32_MAX
#define DOR_FAR INT32_MIN	/* a coordinate not yet given */

struct dor {
	const struct fabric *f;
	struct lft_tables *t;
	uint32_t n;			/* switches (rows) */
	int ndim;
	int size[DOR_DIMS];
	int ring[DOR_DIMS];		/* 1: torus in that dimension */
	int32_t (*at)[DOR_DIMS];	/* per row: coordinates */
	uint32_t (*nb)[DOR_DIMS][2];	/* per row, dim, +/-: the neighbour row */
	uint8_t (*port)[DOR_DIMS][2];	/* and the port towards it */
	uint32_t *grid;			/* coordinates -> row, DOR_NONE */
	uint32_t *queue;
};

/* The dimension and way (0 +, 1 -) of switch port p, by its number. */
static void port_dir(unsigned p, int *dim, int *way)
{
	*dim = (int)((p - 1) / 2);
	*way = (int)((p - 1) % 2);
}

static uint32_t cell(const struct dor *x, const int32_t *c)
{
	uint32_t i = 0;
	for (int d = x->ndim; d-- > 0;)
		i = i * (uint32_t)x->size[d] + (uint32_t)c[d];
	return i;
}

/* The neighbours of every switch by dimension and way, from the cables. */
static int read_cables(struct dor *x, char *err, size_t errlen)
{
	const struct fabric *f = x->f;
	x->ndim = 0;
	for (uint32_t r = 0; r < x->n; r++) {
		uint32_t ni = x->t->sw_node[r];
		const struct fab_node *nd = &f->nodes[ni];
		for (unsigned p = 1; p <= nd->nports; p++) {
			uint32_t pi = nd->first_port + p;
			if (!graph_link_up(f, pi) || !graph_peer_is_switch(f, pi))
				continue;
			const struct fab_port *q = &f->ports[f->ports[pi].remote];
			int d, w, qd, qw;
			port_dir(p, &d, &w);
			port_dir(q->num, &qd, &qw);
			if (d >= DOR_DIMS || qd != d || qw == w) {
				snprintf(err, errlen, "dor: \"%s\" port %u to \"%s\" port %u: not a mesh or "
					 "torus cable (ports 2d+1 and 2d+2 lead + and - in dimension d, "
					 "at most %d dimensions)", f->nodes[ni].desc, p,
					 f->nodes[q->node].desc, q->num, DOR_DIMS);
				return -1;
			}
			if (x->nb[r][d][w] != DOR_NONE) {
				snprintf(err, errlen, "dor: \"%s\" has two cables in dimension %d (%s): "
					 "parallel cables are not routed by dor",
					 f->nodes[ni].desc, d, w ? "-" : "+");
				return -1;
			}
			x->nb[r][d][w] = x->t->row_of_node[q->node];
			x->port[r][d][w] = (uint8_t)p;
			if (d + 1 > x->ndim)
				x->ndim = d + 1;
		}
	}
	return 0;
}

/* Coordinates from the lowest-GUID switch, breadth first. */
static void place(struct dor *x)
{
	uint32_t origin = 0;
	for (uint32_t r = 1; r < x->n; r++)
		if (x->f->nodes[x->t->sw_node[r]].guid <
		    x->f->nodes[x->t->sw_node[origin]].guid)
			origin = r;
	for (uint32_t r = 0; r < x->n; r++)
		for (int d = 0; d < DOR_DIMS; d++)
			x->at[r][d] = DOR_FAR;
	uint32_t qh = 0, qt = 0;
	for (int d = 0; d < DOR_DIMS; d++)
		x->at[origin][d] = 0;
	x->queue[qt++] = origin;
	while (qh < qt) {
		uint32_t r = x->queue[qh++];
		for (int d = 0; d < x->ndim; d++)
			for (int w = 0; w < 2; w++) {
				uint32_t v = x->nb[r][d][w];
				if (v == DOR_NONE || x->at[v][0] != DOR_FAR)
					continue;
				memcpy(x->at[v], x->at[r], sizeof(x->at[r]));
				x->at[v][d] += w ? -1 : 1;
				x->queue[qt++] = v;
			}
	}
}

/*
 * Whether every cable steps the coordinates of dimension d as it should
 * (+1 along d, 0 along the others): exactly (flat), or modulo k.
 */
static void steps(const struct dor *x, int d, int k, int *flat, int *modk)
{
	*flat = *modk = 1;
	for (uint32_t r = 0; r < x->n; r++)
		for (int e = 0; e < x->ndim; e++) {
			uint32_t v = x->nb[r][e][0];
			if (v == DOR_NONE)
				continue;
			int32_t miss = x->at[v][d] - x->at[r][d] - (e == d);
			*flat &= miss == 0;
			*modk &= k > 0 && miss % k == 0;
		}
}

/*
 * Dimension d found as a ring (or not) of size x->size[d] against the
 * given size k: the same, or a ring of k broken in every line.
 */
static int given_size(struct dor *x, int d, int k, char *err, size_t errlen)
{
	int flat, modk;
	if (x->ring[d] && x->size[d] != k) {
		snprintf(err, errlen, "dor: dimension %d is a ring of %d switches, "
			 "routing.dor.dimensions gives %d", d, x->size[d], k);
		return -1;
	}
	if (x->ring[d])
		return 0;
	steps(x, d, k, &flat, &modk);
	if (flat && x->size[d] == k)
		return 0;
	if (flat) {
		snprintf(err, errlen, "dor: dimension %d spans %d switch%s, routing.dor.dimensions "
			 "gives %d (a cabling error, or switches gone at an edge)", d,
			 x->size[d], x->size[d] == 1 ? "" : "es", k);
		return -1;
	}
	if (!modk) {
		snprintf(err, errlen, "dor: dimension %d: the cables close no ring of %d switches "
			 "(routing.dor.dimensions)", d, k);
		return -1;
	}
	x->ring[d] = 1;
	x->size[d] = k;
	return 0;
}

/*
 * Per dimension: a ring when a line closes (its length the size), else
 * the extent, checked against the given sizes (NULL: none); coordinates
 * shifted or wrapped into 0 .. size-1.
 */
static int shape(struct dor *x, const struct dor_opts *given, char *err, size_t errlen)
{
	const struct fabric *f = x->f;
	for (int d = 0; d < x->ndim; d++) {
		int32_t lo = 0, hi = 0;
		x->ring[d] = 0;
		x->size[d] = 0;
		for (uint32_t r = 0; r < x->n; r++) {
			if (x->at[r][0] == DOR_FAR) {
				snprintf(err, errlen, "dor: \"%s\" is not reached through the grid's cables",
					 f->nodes[x->t->sw_node[r]].desc);
				return -1;
			}
			if (x->at[r][d] < lo)
				lo = x->at[r][d];
			if (x->at[r][d] > hi)
				hi = x->at[r][d];
			/* the line through r along +d: does it close on r? */
			uint32_t v = x->nb[r][d][0];
			int len = 1;
			while (v != DOR_NONE && v != r && len <= (int)x->n) {
				v = x->nb[v][d][0];
				len++;
			}
			if (v != r)
				continue;
			if (x->ring[d] && x->size[d] != len) {
				snprintf(err, errlen, "dor: dimension %d has rings of %d and %d switches",
					 d, x->size[d], len);
				return -1;
			}
			x->ring[d] = 1;
			x->size[d] = len;
		}
		if (!x->ring[d])
			x->size[d] = hi - lo + 1;
		if (given && given_size(x, d, given->size[d], err, errlen) < 0)
			return -1;
		for (uint32_t r = 0; r < x->n; r++) {
			int32_t c = x->at[r][d] - (x->ring[d] ? 0 : lo);
			if (x->ring[d])
				c = ((c % x->size[d]) + x->size[d]) % x->size[d];
			x->at[r][d] = c;
		}
	}
	for (int d = x->ndim; d < DOR_DIMS; d++)
		x->size[d] = 1;
	return 0;
}

/* Every cable one step along its dimension, one switch per place. */
static int check_grid(struct dor *x, char *err, size_t errlen)
{
	const struct fabric *f = x->f;
	size_t cells = 1;
	for (int d = 0; d < x->ndim; d++)
		cells *= (size_t)x->size[d];
	if (cells > (size_t)x->n * 4 + 16) {
		snprintf(err, errlen, "dor: %zu places for %u switches: not a mesh or torus", cells,
			 x->n);
		return -1;
	}
	x->grid = malloc(cells * sizeof(*x->grid));
	if (!x->grid) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < cells; i++)
		x->grid[i] = DOR_NONE;
	for (uint32_t r = 0; r < x->n; r++) {
		uint32_t i = cell(x, x->at[r]);
		if (x->grid[i] != DOR_NONE) {
			snprintf(err, errlen, "dor: \"%s\" and \"%s\" fall on one place of the grid",
				 f->nodes[x->t->sw_node[x->grid[i]]].desc,
				 f->nodes[x->t->sw_node[r]].desc);
			return -1;
		}
		x->grid[i] = r;
		for (int d = 0; d < x->ndim; d++) {
			uint32_t v = x->nb[r][d][0];
			if (v == DOR_NONE)
				continue;
			int32_t want = x->at[r][d] + 1;
			if (x->ring[d])
				want %= x->size[d];
			int same = x->at[v][d] == want;
			for (int e = 0; e < x->ndim; e++)
				same &= e == d || x->at[v][e] == x->at[r][e];
			if (!same) {
				snprintf(err, errlen, "dor: the cable from \"%s\" port %u does not lead one "
					 "step along dimension %d", f->nodes[x->t->sw_node[r]].desc,
					 x->port[r][d][0], d);
				return -1;
			}
		}
	}
	return 0;
}

/* Without datelines: each ring's cables from k-1 to 0 left out, a line. */
static void cut_wraps(struct dor *x)
{
	for (int d = 0; d < x->ndim; d++) {
		if (!x->ring[d])
			continue;
		for (uint32_t r = 0; r < x->n; r++) {
			uint32_t v = x->nb[r][d][0];
			if (x->at[r][d] != x->size[d] - 1 || v == DOR_NONE)
				continue;
			x->nb[r][d][0] = DOR_NONE;
			x->nb[v][d][1] = DOR_NONE;
		}
		x->ring[d] = 0;
	}
}

/*
 * The way (0 +, 1 -) from row r towards coordinate to in dimension d,
 * -1 when neither way is whole: the shorter, or the other round a ring
 * when a cable or switch of the shorter is missing.
 */
static int way_to(const struct dor *x, uint32_t r, int d, int32_t to)
{
	int32_t from = x->at[r][d], k = x->size[d];
	int ways[2], n = 0;
	if (x->ring[d]) {
		int32_t fwd = ((to - from) % k + k) % k;
		ways[n++] = fwd <= k - fwd ? 0 : 1;
		ways[n++] = !ways[0];
	} else {
		ways[n++] = to > from ? 0 : 1;
	}
	for (int i = 0; i < n; i++) {
		uint32_t v = r;
		int32_t c = from;
		while (c != to) {
			v = x->nb[v][d][ways[i]];
			if (v == DOR_NONE)
				break;
			c = x->at[v][d];
		}
		if (v != DOR_NONE)
			return ways[i];
	}
	return -1;
}

/* The LFT entries of LID lid (attached at row dst) from every switch. */
static int route_lid(struct dor *x, uint32_t lid, uint32_t dst, uint8_t dport,
		     char *err, size_t errlen)
{
	for (uint32_t r = 0; r < x->n; r++) {
		uint8_t *e = &lft_row(x->t, r)[lid];
		if (r == dst) {
			*e = dport;
			continue;
		}
		int d = 0;
		while (d < x->ndim && x->at[r][d] == x->at[dst][d])
			d++;
		int w = way_to(x, r, d, x->at[dst][d]);
		if (w < 0) {
			snprintf(err, errlen, "dor: the %s in dimension %d through \"%s\" is broken "
				 "with no way round it (LID %u)", x->ring[d] ? "ring" : "line", d,
				 x->f->nodes[x->t->sw_node[r]].desc, lid);
			return -1;
		}
		*e = x->port[r][d][w];
	}
	return 0;
}

/* Bit d of the SL: the route from row r to lid crosses dimension d's dateline. */
static uint8_t dateline_sl(const struct dor *x, uint32_t r, uint32_t lid, uint32_t dst)
{
	uint8_t sl = 0;
	for (uint32_t hops = 0; r != dst && hops <= x->n; hops++) {
		uint8_t p = lft_row(x->t, r)[lid];
		int d, w;
		port_dir(p, &d, &w);
		uint32_t v = x->nb[r][d][w];
		if (x->ring[d] && ((w == 0 && x->at[v][d] == 0 && x->at[r][d] == x->size[d] - 1) ||
				   (w == 1 && x->at[r][d] == 0 && x->at[v][d] == x->size[d] - 1)))
			sl |= (uint8_t)(1u << d);
		r = v;
	}
	return sl;
}

/*
 * The SL-to-VL tables: table 0 every SL on VL 0 (CA ports, switch port
 * 0, switch ports to CAs), table 1 + d SL s on VL (s >> d) & 1 (a switch
 * port of dimension d, a ring; VL 0 in a line), whatever the input port.
 */
static int dor_sl2vl(struct dor *x)
{
	const struct fabric *f = x->f;
	struct lft_tables *t = x->t;
	if (lft_sl2vl_slots(f, t) < 0 || !(t->sl2vl = calloc((size_t)(1 + x->ndim), QOS_SLS)))
		return -1;
	t->sl2vl_n = 1u + (uint32_t)x->ndim;
	for (int d = 0; d < x->ndim; d++)
		for (unsigned s = 0; s < QOS_SLS; s++)
			t->sl2vl[(size_t)(1 + d) * QOS_SLS + s] =
				(uint8_t)(x->ring[d] ? (s >> d) & 1 : 0);
	for (uint32_t r = 0; r < x->n; r++) {
		uint32_t ni = t->sw_node[r];
		unsigned w = t->sl2vl_width[ni];
		for (unsigned out = 1; out < w; out++) {
			int d, way;
			port_dir(out, &d, &way);
			if (d >= x->ndim || x->port[r][d][way] != out)
				continue;
			for (unsigned in = 0; in < w; in++)
				t->sl2vl_idx[(size_t)t->sl2vl_first[ni] + (size_t)in * w + out] =
					(uint16_t)(1 + d);
		}
	}
	return 0;
}

int dor_route(const struct fabric *f, const struct route_opts *o,
	      struct lft_tables *t, char *err, size_t errlen)
{
	struct dor x = { .f = f, .t = t, .n = t->n_sw };
	int rc = -1;
	lft_tables_free_qos(t);
	if (t->n_sw >= LFT_SL_NOCLASS) {
		snprintf(err, errlen, "dor: %u switches, at most %u", t->n_sw, LFT_SL_NOCLASS - 1);
		return -1;
	}
	size_t nr = (size_t)x.n + 1, nlid = (size_t)t->max_lid + 1;
	x.at = malloc(nr * sizeof(*x.at));
	x.nb = malloc(nr * sizeof(*x.nb));
	x.port = calloc(nr, sizeof(*x.port));
	x.queue = malloc(nr * sizeof(*x.queue));
	t->sl_class = malloc(nlid * sizeof(*t->sl_class));
	t->sl = calloc(nr * nlid, 1);
	if (!x.at || !x.nb || !x.port || !x.queue || !t->sl_class || !t->sl) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	t->n_sl_class = x.n;
	for (uint32_t r = 0; r < x.n; r++)
		for (int d = 0; d < DOR_DIMS; d++)
			x.nb[r][d][0] = x.nb[r][d][1] = DOR_NONE;
	if (!x.n) {
		snprintf(err, errlen, "dor: no switch");
		goto out;
	}
	const struct dor_opts *given = o && o->dor.ndims ? &o->dor : NULL;
	if (read_cables(&x, err, errlen) < 0)
		goto out;
	int bad = given && given->ndims > DOR_DIMS;
	for (int d = 0; given && !bad && d < given->ndims; d++)
		bad = given->size[d] < 1;
	if (bad) {
		snprintf(err, errlen, "dor: routing.dor.dimensions: 1 to %d sizes, each at least 1",
			 DOR_DIMS);
		goto out;
	}
	if (given && x.ndim > given->ndims) {
		snprintf(err, errlen, "dor: the cables run in %d dimensions, routing.dor.dimensions "
			 "gives %d", x.ndim, given->ndims);
		goto out;
	}
	if (given)
		x.ndim = given->ndims;
	place(&x);
	if (shape(&x, given, err, errlen) < 0 || check_grid(&x, err, errlen) < 0)
		goto out;
	if (o && o->dor.no_dateline)
		cut_wraps(&x);
	int torus = 0;
	for (int d = 0; d < x.ndim; d++)
		torus |= x.ring[d];
	unsigned vls = graph_data_vls(f, o ? o->max_vls : 0);
	if (torus && vls < 2) {
		snprintf(err, errlen, "dor: a torus needs 2 data VLs for its datelines, the links offer "
			 "%u (routing.dor.dateline false routes its rings as lines, on one)", vls);
		goto out;
	}
	for (uint32_t lid = 1; lid <= t->max_lid; lid++) {
		uint32_t row;
		uint8_t port;
		t->sl_class[lid] = LFT_SL_NOCLASS;
		if (graph_lid_attach(f, t, lid, &row, &port) < 0)
			continue;
		t->sl_class[lid] = (uint16_t)row;
		if (route_lid(&x, lid, row, port, err, errlen) < 0)
			goto out;
		for (uint32_t r = 0; r < x.n; r++)
			t->sl[(size_t)r * nlid + lid] = dateline_sl(&x, r, lid, row);
	}
	if (dor_sl2vl(&x) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	t->engine_sls = 1;
	rc = 0;
out:
	if (rc < 0)
		lft_tables_free_qos(t);
	free(x.at);
	free(x.nb);
	free(x.port);
	free(x.queue);
	free(x.grid);
	return rc;
}

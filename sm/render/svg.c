/*
 * The fabric as SVG (see svg.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cgraph.h>
#include <gvc.h>
#include <gvplugin.h>

#include "sm/render/svg.h"

/*
 * The two plugins wanted, linked in (the Makefile): the dot layout and
 * the core renderers (SVG).  No other is loaded, the text-layout one
 * (Pango) above all: label sizes are Graphviz's estimates, the same on
 * every host whatever its fonts.
 */
extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;
static lt_symlist_t builtins[] = {
	{ "gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library },
	{ "gvplugin_core_LTX_library", &gvplugin_core_LTX_library },
	{ NULL, NULL },
};

/*
 * Graphviz's layouts and its error reporting keep state in the library's
 * globals: one layout at a time in this process (the status page's
 * worker and an `ibsmctl topology --svg` worker may overlap).
 */
static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;

/* Lays out the DOT text and renders it; the caller holds gv_lock. */
static char *layout(char *dot, size_t *len, char *err, size_t errlen)
{
	GVC_t *gvc = gvContextPlugins(builtins, 0);
	if (!gvc) {
		snprintf(err, errlen, "Graphviz: no context");
		return NULL;
	}
	agseterr(AGMAX);	/* its warnings and errors are not the log's */
	char *out = NULL;
	Agraph_t *g = agmemread(dot);
	if (!g) {
		snprintf(err, errlen, "Graphviz: cannot read the graph: %s",
			 aglasterr() ? aglasterr() : "?");
		goto done;
	}
	if (gvLayout(gvc, g, "dot") != 0) {
		snprintf(err, errlen, "Graphviz: the dot layout failed");
		agclose(g);
		goto done;
	}
	char *data = NULL;
	unsigned int n = 0;
	if (gvRenderData(gvc, g, "svg", &data, &n) != 0 || !data) {
		snprintf(err, errlen, "Graphviz: cannot render SVG");
	} else if (!(out = malloc((size_t)n + 1))) {
		snprintf(err, errlen, "out of memory");
	} else {
		memcpy(out, data, n);
		out[n] = '\0';
		*len = n;
	}
	if (data)
		gvFreeRenderData(data);
	gvFreeLayout(gvc, g);
	agclose(g);
done:
	gvFreeContext(gvc);
	return out;
}

char *svg_render(const struct fabric *f, const struct lft_tables *t,
		 const struct dot_opts *o, struct dot_stats *st, size_t *len,
		 char *err, size_t errlen)
{
	char *dot = NULL;
	size_t dlen = 0;
	FILE *fp = open_memstream(&dot, &dlen);
	if (!fp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int rc = dot_write(fp, f, t, o, st);
	if (fclose(fp) != 0 || rc < 0) {
		free(dot);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_lock(&gv_lock);
	char *out = layout(dot, len, err, errlen);
	pthread_mutex_unlock(&gv_lock);
	free(dot);
	return out;
}

/*
 * The fabric as SVG: the DOT graph of dot.h laid out and drawn by
 * Graphviz's library (libgvc, the "dot" layout), a pure renderer from the
 * model to text.  The status page's picture (/fabric.svg) and `ibsmctl
 * topology --svg`.  Every DOT element's class is the SVG group's class
 * ("node switch", "edge failed", ...: dot.h); a failed link is dashed.
 */
#ifndef IBSMD_SVG_H
#define IBSMD_SVG_H

#include <stddef.h>

#include "sm/render/dot.h"

/*
 * The SVG text of f (t, o as dot_write takes them), NUL-terminated and
 * malloc'd, its length in *len; NULL with err on ENOMEM or a Graphviz
 * failure.  st may be NULL.  Safe from any thread: layouts take turns
 * (Graphviz keeps its layout state in globals).
 */
char *svg_render(const struct fabric *f, const struct lft_tables *t,
		 const struct dot_opts *o, struct dot_stats *st, size_t *len,
		 char *err, size_t errlen);

#endif

/*
 * render.c — a recorded collective (cd_model) as SVG frames, one HTML page
 * with a step control, and a text dump. No MPI: pure output.
 *
 * A frame: one row per rank, one cell per element, the cells grouped by the
 * p blocks of ck_block (the partition the ring and most schedules use). A
 * cell is p thin stripes, stripe r in rank r's colour when the element holds
 * rank r's contribution, so a reduce-scatter fills a block stripe by stripe
 * and a finished element is every colour. The step's messages are arcs on
 * the right, from sender row to receiver row, labelled with what they carry.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collkit.h"
#include "colldraw.h"

static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948",
                                      "#76b7b2", "#9c755f", "#ff9da7", "#bab0ac", "#86bcb6"};
#define NPAL (int)(sizeof PALETTE / sizeof PALETTE[0])
#define EMPTY "#eeeeee"
#define WRONG "#c00000"
/* a label over arcs stays readable: a white outline painted under its letters */
#define HALO " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\""

static void colour(int r, char *out, size_t cap)
{
    if (r < NPAL) snprintf(out, cap, "%s", PALETTE[r]);
    else snprintf(out, cap, "hsl(%d,55%%,55%%)", (r * 137) % 360);   /* golden-angle hues past the palette */
}

/* Text for SVG/HTML: the algorithm's name and phases come from the user's code. */
static void esc(FILE *f, const char *s)
{
    for (; *s; s++) switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
}

static void bytes_text(size_t b, char *out, size_t cap)
{
    if (b < 1024) snprintf(out, cap, "%zu B", b);
    else if (b < 1024 * 1024) snprintf(out, cap, "%.1f KiB", b / 1024.0);
    else snprintf(out, cap, "%.1f MiB", b / 1048576.0);
}

/* "block 2", "blocks 1-2", "elements 3-5", "element 4": what [elem, elem+n) is. */
static void span_text(const cd_model *m, long elem, long n, char *out, size_t cap)
{
    if (elem < 0) { snprintf(out, cap, "?"); return; }
    if (n == 0) { snprintf(out, cap, "nothing"); return; }
    if (elem == 0 && (size_t)n == m->count) { snprintf(out, cap, "all"); return; }
    int b0 = -1, b1 = -1;
    for (int b = 0; b < m->p; b++) {
        size_t off, len;
        ck_block(m->count, (size_t)m->p, (size_t)b, &off, &len);
        if (len && (long)off == elem) b0 = b;
        if (len && (long)(off + len) == elem + n) b1 = b;
    }
    if (b0 >= 0 && b1 == b0) snprintf(out, cap, "block %d", b0);
    else if (b0 >= 0 && b1 > b0) snprintf(out, cap, "blocks %d-%d", b0, b1);
    else if (n == 1) snprintf(out, cap, "element %ld", elem);
    else snprintf(out, cap, "elements %ld-%ld", elem, elem + n - 1);
}

static int block_of(const cd_model *m, size_t i)
{
    for (int b = 0; b < m->p; b++) {
        size_t off, len;
        ck_block(m->count, (size_t)m->p, (size_t)b, &off, &len);
        if (i >= off && i < off + len) return b;
    }
    return 0;
}

static void ranks_text(uint32_t mask, int p, char *out, size_t cap)
{
    size_t l = 0;
    out[0] = '\0';
    for (int r = 0; r < p && l + 8 < cap; r++)
        if (mask >> r & 1u) l += (size_t)snprintf(out + l, cap - l, "%s%d", l ? "," : "", r);
    if (!l) snprintf(out, cap, "none");
}

/* The collective in words, "" for an all-reduce (the default). */
static const char *coll_words(const cd_model *m)
{
    return m->coll == CK_COLL_REDUCE_SCATTER ? "reduce-scatter" : m->coll == CK_COLL_ALLGATHER ? "all-gather" : "";
}

/* What a wrong cell holds, in words. */
static void describe(const cd_model *m, const cd_cell *c, char *out, size_t cap, size_t i)
{
    char rs[100];
    const uint32_t full = m->p >= 32 ? 0xffffffffu : (1u << m->p) - 1;
    const int own = block_of(m, i);
    if (m->coll == CK_COLL_ALLGATHER && !c->garbled && c->from < 0) {
        /* an all-gather's element is its block owner's input and nothing else */
        if (c->mask) {
            ranks_text(c->mask, m->p, rs, sizeof rs);
            snprintf(out, cap, "holds rank %s's value of it where block %d is rank %d's", rs, own, own);
        } else snprintf(out, cap, "never received: block %d from rank %d is missing", own, own);
    } else if (c->from >= 0) {
        ranks_text(c->mask, m->p, rs, sizeof rs);
        snprintf(out, cap, "holds element %ld's contributions (block %d; ranks %s)", c->from, block_of(m, (size_t)c->from), rs);
    } else if (c->garbled) {
        snprintf(out, cap, "holds no set of this element's contributions (one counted twice, or another value)");
    } else {
        ranks_text(full & ~c->mask, m->p, rs, sizeof rs);
        snprintf(out, cap, "lacks the contributions of ranks %s", rs);
    }
}

/* LANEW: the distance between nested arcs; LABH: a label's two lines at LABF px; LABCW: the width
 * of one of its characters, as DejaVu Sans sets it (about 0.6 em), to size the canvas.
 * The type is large against the rows (F_*: no text under 16 px on a canvas about 20 rows of
 * type tall) so that a frame placed on a slide at three quarters of its height still reads at
 * 8 pt or more from the back of a room (the slide test measures it). */
enum { LEFT = 112, TOP = 72, ROWGAP = 6, CELLH = 26, BGAP = 8, LANEW = 30, SHH = 18, SHGAP = 2, LABF = 17, LABH = 42, LABCW = 10 };
enum { F_TITLE = 21, F_SUB = 17, F_TEXT = 16, F_RANK = 17, LEGH = 22 };

static int cell_w(const cd_model *m) { return m->count <= 16 ? 28 : m->count <= 64 ? 14 : m->count <= 160 ? 6 : 3; }

static int cell_x(const cd_model *m, size_t i) { return LEFT + (int)i * cell_w(m) + block_of(m, i) * BGAP; }

static int grid_right(const cd_model *m)
{
    return m->count ? cell_x(m, m->count - 1) + cell_w(m) : LEFT + 40;
}

/* Rank r's rows: its buffer (sub 0), then its shared regions (sub k + 1), lower. */
static int row_y(const cd_model *m, int r, int sub)
{
    return TOP + r * (CELLH + m->nshared * (SHH + SHGAP) + ROWGAP) + (sub ? CELLH + SHGAP + (sub - 1) * (SHH + SHGAP) : 0);
}
static int row_h(int sub) { return sub ? SHH : CELLH; }

/* One cell: p stripes (stripe q rank q's contribution), hatched when wrong.
 * A region's cell that holds nothing is only a dotted outline: no element is there. */
static void draw_cell(FILE *f, const cd_model *m, const cd_cell *c, int x, int y, int h, int k, int region)
{
    const int p = m->p, cw = cell_w(m);
    if (region && !c->mask && !c->wrong) {
        fprintf(f, "<rect x=\"%d.5\" y=\"%d.5\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#bbb\" "
                   "stroke-dasharray=\"2 2\"/>\n", x, y, cw - 1, h - 1);
        return;
    }
    for (int q = 0; q < p; q++) {
        /* stripe q: rank q's contribution; heights split the cell exactly */
        const int y0 = y + h * q / p, y1 = y + h * (q + 1) / p;
        char cq[32];
        colour(q, cq, sizeof cq);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", x, y0, cw, y1 - y0,
                (c->mask >> q & 1u) && !c->garbled ? cq : EMPTY);
    }
    if (c->wrong)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#hatch%d)\"/>", x, y, cw, h, k);
    if (c->spare)   /* not part of the result: washed out */
        fprintf(f, "<rect class=\"spare\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" fill-opacity=\"0.7\"/>",
                x, y, cw, h);
    fprintf(f, "<rect%s x=\"%d.5\" y=\"%d.5\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"%d\"/>\n",
            c->first ? " class=\"went-wrong\"" : "", x, y, cw - 1, h - 1, c->first ? WRONG : "#666", c->first ? 3 : 1);
}

/* Loads of the same elements share one lane and one label: into one rank
 * from several peers (fan-in: a rank folding one block from every input copy)
 * or from one rank by several peers (fan-out: every rank copying one staging
 * buffer). lead[j] is the first message of j's group (j itself for a message). */
static void group_loads(const cd_frame *F, int *lead, int *fan)
{
    for (int j = 0; j < F->nmsgs; j++) {
        const cd_msg *a = &F->msgs[j];
        lead[j] = j;
        fan[j] = 0;   /* 1 fan-in, 2 fan-out, 0 alone */
        for (int i = 0; i < j && a->load; i++) {
            const cd_msg *b = &F->msgs[i];
            if (lead[i] != i || !b->load || b->dst_row != a->dst_row || b->src_row != a->src_row ||
                b->elem != a->elem || b->nelem != a->nelem || b->bytes != a->bytes) continue;
            const int kind = b->dst == a->dst ? 1 : b->src == a->src ? 2 : 0;
            if (kind && (fan[i] == 0 || fan[i] == kind)) { lead[j] = i; fan[i] = kind; break; }
        }
    }
}

/* The rows a group's arcs span. */
static void group_span(const cd_frame *F, const int *lead, int g, int *lo, int *hi)
{
    *lo = *hi = F->msgs[g].dst;
    for (int j = g; j < F->nmsgs; j++)
        if (lead[j] == g) {
            const int a = F->msgs[j].src, b = F->msgs[j].dst;
            if ((a < b ? a : b) < *lo) *lo = a < b ? a : b;
            if ((a > b ? a : b) > *hi) *hi = a > b ? a : b;
        }
}

/* Lanes for the arcs: a group takes the first lane free over its span of rows. */
static int assign_lanes(const cd_frame *F, const int *lead, int *lane)
{
    int nl = 0;
    for (int k = 0; k < F->nmsgs; k++) {
        if (lead[k] != k) continue;
        int lo, hi;
        group_span(F, lead, k, &lo, &hi);
        for (int l = 0;; l++) {
            int clash = 0;
            for (int j = 0; j < k && !clash; j++) {
                if (lead[j] != j || lane[j] != l) continue;
                int lo2, hi2;
                group_span(F, lead, j, &lo2, &hi2);
                clash = lo <= hi2 && lo2 <= hi;
            }
            if (!clash) { lane[k] = l; if (l + 1 > nl) nl = l + 1; break; }
        }
    }
    return nl;
}

/* How one frame is laid out: the arcs' lanes and groups, the column of their
 * labels, the notes under the grid, the canvas. */
typedef struct layout {
    int  *lane, *lead, *fan;   /* per message (group_loads, assign_lanes); lane NULL: no arcs (out of memory) */
    int   nl;                  /* lanes */
    int  *laby, *peak, *order; /* per group: its label's height, its arcs' peak; the groups by height */
    char (*lab)[2][240];       /* per group: its label's two lines */
    int   nlab, labw, xl;      /* labels, the widest (px), the column's x */
    int   gridB, below, W, H;  /* the grid's bottom, how far the labels reach below it, the canvas */
    char  notes[8][700];       /* where elements went wrong in this frame */
    int   nnotes, more;
    int   wrong, washed;       /* a wrong cell is drawn (the key); the result of a reduce-scatter */
} layout;

static void layout_free(layout *L)
{
    free(L->laby);
    free(L->peak);
    free(L->order);
    free(L->lab);
    free(L->lane);
    free(L->lead);
    free(L->fan);
}

/* The notes under the grid: one per run of elements of one rank that went
 * wrong the same way in this frame, at most 8, and the algorithm's failure. */
static void collect_notes(const cd_model *m, int k, layout *L)
{
    const cd_frame *F = &m->frames[k];
    for (int r = 0; r < m->p; r++)
        for (size_t i = 0; i < m->count; i++) {
            size_t c = (size_t)r * m->count + i;
            if (!F->cells[c].first) continue;
            size_t j = i;
            while (j + 1 < m->count && F->cells[c + (j + 1 - i)].first && (F->cells[c + (j + 1 - i)].from >= 0) == (F->cells[c].from >= 0)) j++;
            if (L->nnotes < 8) {
                char what[300], span[64];
                describe(m, &F->cells[c], what, sizeof what, i);
                span_text(m, (long)i, (long)(j - i + 1), span, sizeof span);
                snprintf(L->notes[L->nnotes++], sizeof L->notes[0], "rank %d, %s: %s", r, span, what);
            } else L->more++;
            i = j;
        }
    if (m->error[0] && k == m->nframes - 1 && L->nnotes < 8)
        snprintf(L->notes[L->nnotes++], sizeof L->notes[0], "the algorithm failed: %s", m->error);
}

/* The label of group j (its first message g), at the height of its arcs' peak (a
 * group's: of the row its arcs meet at), kept in order of height. */
static void label_group(const cd_model *m, const cd_frame *F, layout *L, int j)
{
    const cd_msg *g = &F->msgs[j];
    char span[64], by[32], ends[200];
    int n = 0;
    size_t l = 0;
    /* fan-out: one source, the destinations listed; else the sources listed */
    for (int i = j; i < F->nmsgs && l + 12 < sizeof ends; i++)
        if (L->lead[i] == j) {
            l += (size_t)snprintf(ends + l, sizeof ends - l, "%s%d", n ? "," : "", L->fan[j] == 2 ? F->msgs[i].dst : F->msgs[i].src);
            n++;
        }
    span_text(m, g->elem, g->nelem, span, sizeof span);
    bytes_text(g->bytes, by, sizeof by);
    const int ys = row_y(m, g->src, g->src_row) + row_h(g->src_row) / 2 - 4, yd = row_y(m, g->dst, g->dst_row) + row_h(g->dst_row) / 2 + 4;
    /* a group's label beside the row its arcs meet at: the one loading, or the one loaded from */
    L->peak[j] = n == 1 ? (ys + yd) / 2 : L->fan[j] == 2 ? ys + 4 : yd - 4;
    if (L->fan[j] == 2) snprintf(L->lab[j][0], sizeof L->lab[j][0], "%d\xe2\x86\x92%s load", g->src, ends);
    else snprintf(L->lab[j][0], sizeof L->lab[j][0], "%s\xe2\x86\x92%d%s", ends, g->dst, g->load ? " load" : "");
    snprintf(L->lab[j][1], sizeof L->lab[j][1], "%s%s%s%s", strcmp(span, "?") ? span : "", strcmp(span, "?") ? ", " : "", by,
             n > 1 ? " each" : "");
    for (int t = 0; t < 2; t++) {
        const int w = (int)strlen(L->lab[j][t]) * LABCW;   /* bytes: an arrow (3) counts wide, as it is */
        if (w > L->labw) L->labw = w;
    }
    /* in order of height: insertion into order[] */
    int at = L->nlab++;
    while (at > 0 && L->peak[L->order[at - 1]] > L->peak[j]) { L->order[at] = L->order[at - 1]; at--; }
    L->order[at] = j;
}

/* Down from the top, each label at least LABH below the one above; up from the grid's bottom,
 * so none needs room below the grid; down once more, where the column is taller than the
 * grid (many messages): its end then pushes the legend down (L->below). */
static void spread_labels(layout *L)
{
    const int nlab = L->nlab, *order = L->order;
    int *laby = L->laby;
    for (int pass = 0; pass < 3; pass++)
        for (int n = 0; n < nlab; n++) {
            const int i = pass == 1 ? nlab - 1 - n : n, y = pass ? laby[order[i]] : L->peak[order[i]];
            if (pass == 1) {
                const int lim = i == nlab - 1 ? L->gridB - LABH / 2 : laby[order[i + 1]] - LABH;
                laby[order[i]] = y > lim ? (lim < TOP ? TOP : lim) : y;
            } else laby[order[i]] = i && y < laby[order[i - 1]] + LABH ? laby[order[i - 1]] + LABH : y;
        }
    L->below = nlab && laby[order[nlab - 1]] + 18 > L->gridB ? laby[order[nlab - 1]] + 18 - L->gridB : 0;
}

/* A cell of a buffer or a shared region is wrong in this frame. */
static int frame_wrong(const cd_model *m, const cd_frame *F)
{
    int wrong = 0;
    for (size_t c = 0; c < (size_t)m->p * m->count && !wrong; c++) {
        wrong = F->cells[c].wrong;
        for (int j = 0; j < m->nshared && F->shared && !wrong; j++)
            wrong = F->shared[((size_t)(c / m->count) * CD_MAX_SHARED + (size_t)j) * m->count + c % m->count].wrong;
    }
    return wrong;
}

/* The legend's lines (short ones: the type is large, the canvas narrow), as svg_legend draws them. */
static int legend_lines(const cd_model *m, int k, const layout *L)
{
    return 1 + (m->frames[k].nmsgs > 0) + (m->nshared > 0) + (L->wrong > 0) + 2 * L->washed + L->nnotes + (L->more > 0);
}

/* Arc labels: in a column right of every arc, each at the height of its arc's peak, moved
 * apart where two would overlap (a label is wider than a lane, and arcs of one step often
 * peak at one height: recursive doubling's 0->2 beside 1->3), a dotted leader from the peak
 * (a group's: from where its arcs meet). */
static void layout_frame(const cd_model *m, int k, layout *L)
{
    const cd_frame *F = &m->frames[k];
    const size_t nm = (size_t)(F->nmsgs ? F->nmsgs : 1);
    *L = (layout){.lane = calloc(nm, sizeof *L->lane), .lead = calloc(nm, sizeof *L->lead), .fan = calloc(nm, sizeof *L->fan)};
    if (!L->lead || !L->fan) { free(L->lane); L->lane = NULL; }
    if (L->lane) group_loads(F, L->lead, L->fan);
    L->nl = L->lane ? assign_lanes(F, L->lead, L->lane) : 0;
    collect_notes(m, k, L);
    L->gridB = row_y(m, m->p, 0) - ROWGAP;
    L->xl = grid_right(m) + 24 + L->nl * LANEW + 10;
    L->laby = calloc(nm, sizeof *L->laby);
    L->peak = calloc(nm, sizeof *L->peak);
    L->order = calloc(nm, sizeof *L->order);
    L->lab = calloc(nm, sizeof *L->lab);
    if (!L->laby || !L->peak || !L->order || !L->lab) { free(L->lane); L->lane = NULL; }
    for (int j = 0; L->lane && j < F->nmsgs; j++) {
        const cd_msg *g = &F->msgs[j];
        if (L->lead[j] == j && g->src >= 0 && g->src < m->p && g->dst >= 0 && g->dst < m->p) label_group(m, F, L, j);
    }
    spread_labels(L);
    L->W = L->nlab ? L->xl + L->labw + 12 : grid_right(m) + 24 + L->nl * LANEW + 40;
    L->washed = m->coll == CK_COLL_REDUCE_SCATTER && k == m->nframes - 1 && k > 0;
    L->wrong = frame_wrong(m, F);
    L->H = L->gridB + L->below + 6 + legend_lines(m, k, L) * LEGH + 12;
}

static void svg_head(FILE *f, int k, const layout *L)
{
    const int W = L->W < 660 ? 660 : L->W;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n", W, L->H, W, L->H);
    /* ids carry the frame number: the page inlines every frame, and a hidden frame's defs cannot be used */
    fprintf(f, "<defs><pattern id=\"hatch%d\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
               "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\" fill-opacity=\"0.55\"/>"
               "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"" WRONG "\" stroke-width=\"3\"/></pattern>"
               "<marker id=\"head%d\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
               "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/></marker></defs>\n", k, k);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
}

/* The title, and what the frame shows. */
static void svg_title(FILE *f, const cd_model *m, int k)
{
    const cd_frame *F = &m->frames[k];
    char b[64];
    bytes_text(m->count * 8, b, sizeof b);
    fprintf(f, "<text x=\"12\" y=\"24\" font-size=\"%d\" font-weight=\"bold\">", F_TITLE);
    esc(f, m->algo);
    fprintf(f, "%s%s, p = %d, %zu elements (%s)%s", m->coll ? " " : "", coll_words(m), m->p, m->count, b,
            m->inplace ? "" : ", out of place");
    if (m->viewer > 0) fprintf(f, ": rank %d's view", m->viewer - 1);
    fprintf(f, "</text>\n");
    fprintf(f, "<text x=\"12\" y=\"48\" font-size=\"%d\">", F_SUB);
    if (F->step == -1 && m->coll == CK_COLL_ALLGATHER)
        fprintf(f, "input: every rank holds its own block%s", m->inplace ? "" : " (in its send buffer: the result starts empty)");
    else if (F->step == -1)
        fprintf(f, "input: every rank holds its own contribution%s", m->inplace ? "" : " (the result buffer starts empty)");
    else if (F->step == CD_NO_STEP) fprintf(f, "the result (the algorithm named no steps)");
    else {
        fprintf(f, "after step %d (", F->step);
        esc(f, F->phase[0] ? F->phase : "unnamed");
        fprintf(f, ")%s", k == m->nframes - 1 ? m->coll == CK_COLL_REDUCE_SCATTER ? ": the result, block r on rank r" : ": the result" : "");
    }
    fprintf(f, " \xc2\xb7 frame %d of %d</text>\n", k + 1, m->nframes);
}

static void svg_block_labels(FILE *f, const cd_model *m)
{
    for (int bl = 0; bl < m->p && m->count; bl++) {
        size_t off, len;
        ck_block(m->count, (size_t)m->p, (size_t)bl, &off, &len);
        if (!len) continue;
        int x0 = cell_x(m, off), x1 = cell_x(m, off + len - 1) + cell_w(m);
        if (x1 - x0 >= 40 || m->p <= 8)
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s%d</text>\n",
                    (x0 + x1) / 2, TOP - 8, F_TEXT, x1 - x0 >= 72 ? "block " : "", bl);
    }
}

/* Per rank: its buffer's row, then its shared regions' rows. */
static void svg_rows(FILE *f, const cd_model *m, int k)
{
    const cd_frame *F = &m->frames[k];
    for (int r = 0; r < m->p; r++) {
        const int y = row_y(m, r, 0);
        char col[32];
        colour(r, col, sizeof col);
        fprintf(f, "<rect x=\"10\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", y + CELLH / 2 - 6, col);
        fprintf(f, "<text x=\"26\" y=\"%d\" font-size=\"%d\">rank %d</text>\n", y + CELLH / 2 + 6, F_RANK, r);
        for (size_t i = 0; i < m->count; i++) draw_cell(f, m, &F->cells[(size_t)r * m->count + i], cell_x(m, i), y, CELLH, k, 0);
        for (int j = 0; j < m->nshared && F->shared; j++) {
            const int ys = row_y(m, r, j + 1);
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-style=\"italic\" fill=\"#444\" text-anchor=\"end\">",
                    LEFT - 6, ys + SHH / 2 + 5, F_TEXT);
            esc(f, m->shared[j]);
            fprintf(f, "</text>\n");
            for (size_t i = 0; i < m->count; i++)
                draw_cell(f, m, &F->shared[((size_t)r * CD_MAX_SHARED + (size_t)j) * m->count + i], cell_x(m, i), ys, SHH, k, 1);
        }
    }
}

/* Message j: the sent elements outlined on the sender's row, an arc to the
 * receiver; a group's first message also draws the group's label. */
static void svg_message(FILE *f, const cd_model *m, int k, const layout *L, int j)
{
    const cd_msg *g = &m->frames[k].msgs[j];
    const int cw = cell_w(m);
    if (g->elem >= 0 && g->nelem > 0 && (size_t)(g->elem + g->nelem) <= m->count)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#222\" "
                   "stroke-width=\"2\" stroke-dasharray=\"4 2\"/>\n",
                cell_x(m, (size_t)g->elem) - 2, row_y(m, g->src, g->src_row) - 2,
                cell_x(m, (size_t)(g->elem + g->nelem - 1)) + cw - cell_x(m, (size_t)g->elem) + 4, row_h(g->src_row) + 4);
    const int x0 = grid_right(m) + 4, xa = grid_right(m) + 24 + L->lane[L->lead[j]] * LANEW;
    const int ys = row_y(m, g->src, g->src_row) + row_h(g->src_row) / 2 - 4, yd = row_y(m, g->dst, g->dst_row) + row_h(g->dst_row) / 2 + 4;
    /* a cubic from (x0, ys) to (x0, yd) with both control points at xc peaks at x0 + 3/4 (xc - x0) */
    const int xc = x0 + (xa - x0) * 4 / 3;
    fprintf(f, "<path d=\"M%d,%d C%d,%d %d,%d %d,%d\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.6\"%s "
               "marker-end=\"url(#head%d)\"/>\n", x0, ys, xc, ys, xc, yd, x0 + 2, yd, g->load ? " stroke-dasharray=\"5 3\"" : "", k);
    if (L->lead[j] != j) return;   /* a group is labelled once, by its first message */
    const int ym = L->laby[j], xl = L->xl;
    fprintf(f, "<path class=\"leader\" d=\"M%d,%d L%d,%d L%d,%d\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\" "
               "stroke-dasharray=\"1 2\"/>", L->fan[j] ? x0 + 14 : xa, L->peak[j], xl - 12, ym - 6, xl - 3, ym - 6);
    fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" font-size=\"%d\" fill=\"#222\"" HALO ">", xl, ym - 2, LABF);
    esc(f, L->lab[j][0]);
    fprintf(f, "</text><text x=\"%d\" y=\"%d\" font-size=\"%d\" fill=\"#222\"" HALO ">", xl, ym + 17, LABF);
    esc(f, L->lab[j][1]);
    fprintf(f, "</text>\n");
}

/* One line of the legend, LEGH below the last. */
static void legend_line(FILE *f, int *y, const char *fill, const char *text)
{
    *y += LEGH;
    fprintf(f, "<text x=\"12\" y=\"%d\" font-size=\"%d\" fill=\"%s\">", *y, F_TEXT, fill);
    esc(f, text);
    fprintf(f, "</text>\n");
}

/* The legend, the key to what this frame has, and the notes. */
static void svg_legend(FILE *f, const cd_model *m, int k, const layout *L)
{
    int y = L->gridB + L->below + 6, sends = 0, loads = 0;
    char line[800];
    for (int j = 0; j < m->frames[k].nmsgs; j++) {
        if (m->frames[k].msgs[j].load) loads++;
        else sends++;
    }
    /* a frame of loads has no message: its dashed outlines are what a peer loads from that row */
    const char *dashed = !loads ? "the elements a rank sends" : !sends ? "the elements a peer loads from here"
                                                                       : "the elements sent or loaded";
    legend_line(f, &y, "#333", "A cell is one element; stripe r is rank r's contribution.");
    if (sends || loads) {
        snprintf(line, sizeof line, "Dashed outline: %s in this step.", dashed);
        legend_line(f, &y, "#333", line);
    }
    if (m->nshared) {
        legend_line(f, &y, "#333", "Italic rows: shared memory; a dashed arrow: a load (no message).");
    }
    if (L->wrong) {   /* the key to the hatching, where there is some */
        y += LEGH;
        fprintf(f, "<rect x=\"12\" y=\"%d\" width=\"14\" height=\"14\" fill=\"url(#hatch%d)\" stroke=\"" WRONG "\" stroke-width=\"2\"/>"
                   "<text class=\"wrong-key\" x=\"32\" y=\"%d\" font-size=\"%d\" fill=\"#333\">wrong (thick outline: went wrong in this step)</text>\n",
                y - 12, k, y, F_TEXT);
    }
    if (L->washed) {
        legend_line(f, &y, "#333", "Washed out: outside a rank's own block,");
        legend_line(f, &y, "#333", "which a reduce-scatter leaves undefined.");
    }
    for (int j = 0; j < L->nnotes; j++) legend_line(f, &y, WRONG, L->notes[j]);
    if (L->more) {
        snprintf(line, sizeof line, "and %d more", L->more);
        legend_line(f, &y, WRONG, line);
    }
}

void cd_write_svg(const cd_model *m, int k, FILE *f)
{
    const cd_frame *F = &m->frames[k];
    layout L;
    layout_frame(m, k, &L);
    svg_head(f, k, &L);
    svg_title(f, m, k);
    svg_block_labels(f, m);
    svg_rows(f, m, k);
    for (int j = 0; L.lane && j < F->nmsgs; j++) {
        const cd_msg *g = &F->msgs[j];
        if (g->src >= 0 && g->src < m->p && g->dst >= 0 && g->dst < m->p) svg_message(f, m, k, &L, j);
    }
    if (F->step >= 0 && F->nmsgs == 0)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" fill=\"#555\">%s</text>\n",
                grid_right(m) + 12, TOP + 16, F_TEXT, m->nshared ? "no messages, no loads in this step" : "no messages posted in this step");
    svg_legend(f, m, k, &L);
    fprintf(f, "</svg>\n");
    layout_free(&L);
}

void cd_write_text(const cd_model *m, FILE *f)
{
    fprintf(f, "p %d count %zu %s%s%s\n", m->p, m->count, m->inplace ? "in-place" : "out-of-place", m->coll ? " " : "",
            coll_words(m));
    for (int k = 0; k < m->nframes; k++) {
        const cd_frame *F = &m->frames[k];
        fprintf(f, "frame %d step %d %s\n", k, F->step, F->phase);
        for (int r = 0; r < m->p; r++) {
            fprintf(f, "  rank %d:", r);
            for (size_t i = 0; i < m->count; i++) {
                const cd_cell *c = &F->cells[(size_t)r * m->count + i];
                fprintf(f, " %x%s%s", c->mask, c->wrong ? "!" : "", c->spare ? "~" : "");
                if (c->from >= 0) fprintf(f, "<%ld", c->from);
            }
            fputc('\n', f);
            for (int j = 0; j < m->nshared && F->shared; j++) {
                fprintf(f, "  rank %d %s:", r, m->shared[j]);
                for (size_t i = 0; i < m->count; i++) {
                    const cd_cell *c = &F->shared[((size_t)r * CD_MAX_SHARED + (size_t)j) * m->count + i];
                    fprintf(f, " %x%s", c->mask, c->wrong ? "!" : "");
                }
                fputc('\n', f);
            }
        }
        for (int j = 0; j < F->nmsgs; j++) {
            char span[64];
            span_text(m, F->msgs[j].elem, F->msgs[j].nelem, span, sizeof span);
            fprintf(f, "  %s %d -> %d %zu B %s\n", F->msgs[j].load ? "load" : "send", F->msgs[j].src, F->msgs[j].dst,
                    F->msgs[j].bytes, span);
        }
    }
    if (m->error[0]) fprintf(f, "failed\n");
}

static void write_html(const cd_model *m, FILE *f, char *const *svgs)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
    esc(f, m->algo);
    fprintf(f, " at p = %d: %s step by step</title>\n"
               "<style>body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:16px;color:#222}"
               "#controls{margin:8px 0;display:flex;gap:10px;align-items:center}"
               "#controls button{font-size:15px;padding:4px 12px}#slider{width:320px}"
               ".frame svg{max-width:100%%;height:auto}.hint{color:#666;font-size:13px}</style>\n</head>\n"
               "<body data-frame=\"0\" data-frames=\"%d\">\n<h1 style=\"font-size:20px\">", m->p,
            m->coll ? coll_words(m) : "all-reduce", m->nframes);
    esc(f, m->algo);
    fprintf(f, ": one %s of %zu elements on %d ranks, step by step</h1>\n"
               "<div id=\"controls\"><button id=\"prev\" type=\"button\">&#9664; prev</button>"
               "<input id=\"slider\" type=\"range\" min=\"0\" max=\"%d\" value=\"0\" aria-label=\"frame\">"
               "<button id=\"next\" type=\"button\">next &#9654;</button><span id=\"label\"></span></div>\n"
               "<p class=\"hint\">Keys: &larr; &rarr; (or space) step, Home and End jump. The address ends in "
               "#step=N for frame N.</p>\n", m->coll ? coll_words(m) : "all-reduce", m->count, m->p, m->nframes - 1);
    for (int k = 0; k < m->nframes; k++) {
        const cd_frame *F = &m->frames[k];
        fprintf(f, "<div class=\"frame\" id=\"frame-%d\" data-caption=\"", k);
        if (F->step == -1) fprintf(f, "input");
        else if (F->step == CD_NO_STEP) fprintf(f, "result");
        else { fprintf(f, "step %d, ", F->step); esc(f, F->phase); }
        fprintf(f, "\"%s>\n%s</div>\n", k ? " hidden" : "", svgs[k]);
    }
    fputs("<script>\n"
          "(function () {\n"
          "  var frames = document.querySelectorAll('.frame'), n = frames.length;\n"
          "  var slider = document.getElementById('slider'), label = document.getElementById('label');\n"
          "  var prev = document.getElementById('prev'), next = document.getElementById('next'), cur = 0;\n"
          "  function show(k) {\n"
          "    k = Math.max(0, Math.min(n - 1, k | 0)); cur = k;\n"
          "    for (var i = 0; i < n; i++) frames[i].hidden = i !== k;\n"
          "    slider.value = k; prev.disabled = k === 0; next.disabled = k === n - 1;\n"
          "    label.textContent = 'frame ' + (k + 1) + ' of ' + n + ': ' + frames[k].getAttribute('data-caption');\n"
          "    document.body.setAttribute('data-frame', k);\n"
          "    try { history.replaceState(null, '', '#step=' + k); } catch (e) { /* file: pages may refuse */ }\n"
          "  }\n"
          "  prev.addEventListener('click', function () { show(cur - 1); });\n"
          "  next.addEventListener('click', function () { show(cur + 1); });\n"
          "  slider.addEventListener('input', function () { show(+slider.value); });\n"
          "  document.addEventListener('keydown', function (e) {\n"
          "    if (e.target === slider) return;   /* the slider moves itself and fires input */\n"
          "    if (e.key === 'ArrowRight' || e.key === ' ') show(cur + 1);\n"
          "    else if (e.key === 'ArrowLeft') show(cur - 1);\n"
          "    else if (e.key === 'Home') show(0);\n"
          "    else if (e.key === 'End') show(n - 1);\n"
          "    else return;\n"
          "    e.preventDefault();\n"
          "  });\n"
          "  var m = /step=(\\d+)/.exec(location.hash);\n"
          "  show(m ? +m[1] : 0);\n"
          "})();\n"
          "</script>\n</body></html>\n", f);
}

/* One frame's SVG as a string (for the page, which inlines every frame). */
static char *svg_string(const cd_model *m, int k)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f) return NULL;
    cd_write_svg(m, k, f);
    if (fclose(f)) { free(s); return NULL; }
    return s;
}

/* graph.svg: the shape of the first step that sends messages, ranks as nodes and messages as
 * arrows. Where those messages make trees (each message group, the messages carrying one range
 * of elements, sends every rank but one, its root, to exactly one parent, with no cycle: a
 * tree's reduce, the double binary tree's two halves), each tree is drawn as a tree, root on
 * top and marked; anything else (the ring's neighbours, recursive doubling's pairs) on a circle. */
enum { G_NODE = 20, G_LEVEL = 86, G_SLOT = 64, G_TOP = 92, G_F = 18 };

/* The first frame with messages (not loads), or -1. */
static int graph_frame(const cd_model *m)
{
    for (int k = 0; k < m->nframes; k++)
        for (int j = 0; j < m->frames[k].nmsgs; j++)
            if (!m->frames[k].msgs[j].load) return k;
    return -1;
}

/* The message groups of frame k (by element range, at most 2) as parent arrays: 1 when every
 * group is a tree over all p ranks (parent[g][r], -1 at the root), else 0. */
static int graph_trees(const cd_model *m, int k, int par[2][32], int root[2], long first[2], int *ng)
{
    const cd_frame *F = &m->frames[k];
    *ng = 0;
    for (int j = 0; j < F->nmsgs; j++) {
        const cd_msg *g = &F->msgs[j];
        if (g->load || g->src < 0 || g->src >= m->p || g->dst < 0 || g->dst >= m->p) return 0;
        int t = 0;
        while (t < *ng && first[t] != g->elem) t++;
        if (t == *ng) {
            if (*ng == 2) return 0;
            first[t] = g->elem;
            for (int r = 0; r < m->p; r++) par[t][r] = -1;
            (*ng)++;
        }
        if (par[t][g->src] >= 0 && par[t][g->src] != g->dst) return 0;   /* two parents: no tree */
        par[t][g->src] = g->dst;
    }
    for (int t = 0; t < *ng; t++) {
        root[t] = -1;
        for (int r = 0; r < m->p; r++) {
            int hops = 0;
            for (int q = r; par[t][q] >= 0 && hops <= m->p; q = par[t][q]) hops++;
            if (hops > m->p) return 0;   /* a cycle */
            if (par[t][r] < 0) {
                if (root[t] >= 0) return 0;   /* two roots: not one tree over every rank */
                root[t] = r;
            }
        }
    }
    return *ng > 0;
}

/* x of every node of tree t: leaves in depth-first order one slot apart, a parent over the
 * middle of its children; returns the next free slot. */
static double tree_place(const cd_model *m, const int *par, int r, double slot, double *x, int *depth, int d)
{
    int kids = 0;
    double lo = 0, hi = 0;
    depth[r] = d;
    for (int c = 0; c < m->p; c++)
        if (par[c] == r) {
            slot = tree_place(m, par, c, slot, x, depth, d + 1);
            if (!kids++) lo = x[c];
            hi = x[c];
        }
    if (!kids) { x[r] = slot; return slot + 1; }
    x[r] = (lo + hi) / 2;
    return slot;
}

static void graph_node(FILE *f, double x, double y, int r, int root)
{
    char col[32];
    colour(r, col, sizeof col);
    if (root) fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"none\" stroke=\"" WRONG "\" stroke-width=\"3\"/>", x, y, G_NODE + 6);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" stroke=\"#333\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" "
               "font-weight=\"bold\" fill=\"#fff\" text-anchor=\"middle\">%d</text>\n", x, y, G_NODE, col, x, y + 6, G_F, r);
}

/* An arrow from node a to node b, stopping at b's circle. */
static void graph_arrow(FILE *f, double ax, double ay, double bx, double by, const char *dash)
{
    const double dx = bx - ax, dy = by - ay, d = sqrt(dx * dx + dy * dy);
    if (d < 1) return;
    const double s = (G_NODE + 3) / d;
    fprintf(f, "<path d=\"M%.1f,%.1f L%.1f,%.1f\" stroke=\"#333\" stroke-width=\"2\" fill=\"none\"%s marker-end=\"url(#ghead)\"/>\n",
            ax + dx * s, ay + dy * s, bx - dx * s, by - dy * s, dash);
}

static void graph_head(FILE *f, const cd_model *m, int k, int W, int H, const char *what)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
               "<defs><marker id=\"ghead\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
               "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/></marker></defs>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n<text x=\"12\" y=\"26\" font-size=\"21\" font-weight=\"bold\">",
            W, H, W, H);
    esc(f, m->algo);
    fprintf(f, ", p = %d: %s</text>\n<text x=\"12\" y=\"52\" font-size=\"%d\">step %d (", m->p, what, G_F, m->frames[k].step);
    esc(f, m->frames[k].phase[0] ? m->frames[k].phase : "unnamed");
    fprintf(f, "): an arrow is a message, sender to receiver</text>\n");
}

static void graph_trees_svg(FILE *f, const cd_model *m, int k, int par[2][32], const int *root, const long *first, int ng)
{
    double x[2][32];
    int depth[2][32], pw[2], deep = 0, W = 24, order[2] = {0, 1};
    if (ng == 2 && first[1] < first[0]) order[0] = 1, order[1] = 0;   /* the lower elements' tree first */
    for (int t = 0; t < ng; t++) {
        const int leaves = (int)tree_place(m, par[t], root[t], 0, x[t], depth[t], 0);
        for (int r = 0; r < m->p; r++) if (depth[t][r] > deep) deep = depth[t][r];
        pw[t] = leaves * G_SLOT < 240 ? 240 : leaves * G_SLOT;   /* a panel: its leaves, or its caption */
        W += pw[t] + (t ? 40 : 0);
    }
    const int Wc = W < 660 ? 660 : W, H = G_TOP + 40 + deep * G_LEVEL + G_NODE + 24;
    graph_head(f, m, k, Wc, H, ng > 1 ? "the two trees its messages make" : "the tree its messages make");
    double x0 = (Wc - W) / 2.0 + 12;
    for (int i = 0; i < ng; i++) {
        const int t = order[i];
        char span[64] = "";
        for (const cd_msg *g = m->frames[k].msgs; g < m->frames[k].msgs + m->frames[k].nmsgs; g++)
            if (g->elem == first[t]) { span_text(m, g->elem, g->nelem, span, sizeof span); break; }
        double lo = 1e9, hi = -1e9;
        for (int r = 0; r < m->p; r++) { if (x[t][r] < lo) lo = x[t][r]; if (x[t][r] > hi) hi = x[t][r]; }
        const double off = x0 + pw[t] / 2.0 - (lo + hi) / 2 * G_SLOT;   /* the tree centred in its panel */
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"%d\" text-anchor=\"middle\">%s: root %d (ringed)</text>\n",
                x0 + pw[t] / 2.0, G_TOP, G_F, span, root[t]);
        for (int r = 0; r < m->p; r++)
            if (par[t][r] >= 0)
                graph_arrow(f, off + x[t][r] * G_SLOT, G_TOP + 40 + depth[t][r] * G_LEVEL,
                            off + x[t][par[t][r]] * G_SLOT, G_TOP + 40 + depth[t][par[t][r]] * G_LEVEL, "");
        for (int r = 0; r < m->p; r++) graph_node(f, off + x[t][r] * G_SLOT, G_TOP + 40 + depth[t][r] * G_LEVEL, r, r == root[t]);
        x0 += pw[t] + 40;
    }
}

/* Anything else: the ranks on a circle, rank 0 on top, clockwise. */
static void graph_circle_svg(FILE *f, const cd_model *m, int k)
{
    const double R = m->p <= 4 ? 90 : 60 + 12.0 * m->p, cx = 330, cy = G_TOP - 20 + R + G_NODE;
    const int W = 660, H = (int)(cy + R + G_NODE + 24);
    graph_head(f, m, k, W, H, "the ranks as a circle");
    double px[32], py[32];
    for (int r = 0; r < m->p; r++) {
        px[r] = cx + R * sin(2 * M_PI * r / m->p);
        py[r] = cy - R * cos(2 * M_PI * r / m->p);
    }
    for (int j = 0; j < m->frames[k].nmsgs; j++) {
        const cd_msg *g = &m->frames[k].msgs[j];
        if (g->load || g->src < 0 || g->src >= m->p || g->dst < 0 || g->dst >= m->p) continue;
        graph_arrow(f, px[g->src], py[g->src], px[g->dst], py[g->dst], "");
    }
    for (int r = 0; r < m->p; r++) graph_node(f, px[r], py[r], r, 0);
}

void cd_write_graph(const cd_model *m, FILE *f)
{
    const int k = graph_frame(m);
    int par[2][32], root[2], ng;
    long first[2];
    if (k < 0) return;
    if (graph_trees(m, k, par, root, first, &ng)) graph_trees_svg(f, m, k, par, root, first, ng);
    else graph_circle_svg(f, m, k);
    fprintf(f, "</svg>\n");
}

static int write_file(const char *dir, const char *name, char *err, size_t errlen, const cd_model *m, int k,
                      char *const *svgs)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); return -1; }
    if (svgs) write_html(m, f, svgs);
    else if (k == CD_GRAPH) cd_write_graph(m, f);
    else if (k >= 0) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f), cd_write_svg(m, k, f);
    else cd_write_text(m, f);
    if (ferror(f) | fclose(f)) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); return -1; }
    return 0;
}

/* A file colldraw writes: frame-NN.svg, frames.txt, index.html (a drawing), gantt.svg (a timeline). */
static int own_file(const char *name, int gantt)
{
    if (gantt) return !strcmp(name, "gantt.svg");
    if (!strcmp(name, "frames.txt") || !strcmp(name, "index.html") || !strcmp(name, "graph.svg")) return 1;
    size_t n = strlen(name);
    return n >= 12 && !strncmp(name, "frame-", 6) && !strcmp(name + n - 4, ".svg") &&
           strspn(name + 6, "0123456789") == n - 10;
}

int cd_out_dir(const char *dir, int gantt, int overwrite, int dry, char *err, size_t errlen)
{
    if (dry) {
        struct stat st;
        if (stat(dir, &st) != 0) return 0;   /* nothing there: made when the drawing is written */
    } else if (mkdir(dir, 0777) == 0) return 0;
    else if (errno != EEXIST) { snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno)); return -1; }
    DIR *d = opendir(dir);
    if (!d) { snprintf(err, errlen, "%s is not a folder colldraw can write into: %s", dir, strerror(errno)); return -1; }
    /* Writing over a user's files would lose them: an existing folder must be empty, or hold only
     * what colldraw writes (an earlier drawing with its frames.txt), replaced when --overwrite says so. */
    int rc = 0, seen = 0, mine = gantt;
    for (struct dirent *e; (e = readdir(d)) && !rc;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        seen = 1;
        if (!strcmp(e->d_name, "frames.txt")) mine = 1;
        if (!own_file(e->d_name, gantt)) {
            snprintf(err, errlen, "%s holds %s, which colldraw did not write: give a new or empty folder (--out)", dir,
                     e->d_name);
            rc = -1;
        }
    }
    closedir(d);
    if (!rc && seen && !mine) {
        snprintf(err, errlen, "%s holds files but no frames.txt: not an earlier drawing; give a new or empty folder (--out)", dir);
        rc = -1;
    }
    if (!rc && seen && !overwrite) {
        snprintf(err, errlen, "%s holds an earlier %s: not written over (give another folder with --out, or --overwrite)",
                 dir, gantt ? "timeline (gantt.svg)" : "drawing (frames.txt, index.html, frame-NN.svg)");
        rc = -1;
    }
    if (rc || gantt || dry) return rc;
    /* an earlier drawing: its frames go, so none is left beyond this one's count */
    if (!(d = opendir(dir))) { snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno)); return -1; }
    for (struct dirent *e; (e = readdir(d));) {
        char path[1200];
        if (strncmp(e->d_name, "frame-", 6) || !own_file(e->d_name, 0)) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    return 0;
}

/* One rank's view (--view R): a copy of the model whose frames hold only the messages and loads
 * rank R receives, for the SVG frames; NULL when out of memory. */
static cd_model *one_view(const cd_model *m)
{
    cd_model *v = malloc(sizeof *v);
    cd_frame *fr = calloc((size_t)(m->nframes ? m->nframes : 1), sizeof *fr);
    if (!v || !fr) { free(v); free(fr); return NULL; }
    *v = *m;
    v->frames = fr;
    for (int k = 0; k < m->nframes; k++) {
        fr[k] = m->frames[k];
        fr[k].msgs = calloc((size_t)(m->frames[k].nmsgs ? m->frames[k].nmsgs : 1), sizeof *fr[k].msgs);
        fr[k].nmsgs = 0;
        for (int j = 0; fr[k].msgs && j < m->frames[k].nmsgs; j++)
            if (m->frames[k].msgs[j].dst == m->viewer - 1) fr[k].msgs[fr[k].nmsgs++] = m->frames[k].msgs[j];
    }
    return v;
}

static void view_free(cd_model *v)
{
    for (int k = 0; v && k < v->nframes; k++) free(v->frames[k].msgs);
    if (v) free(v->frames);
    free(v);
}

int cd_write_all(const cd_model *all, const char *dir, int overwrite, char *err, size_t errlen)
{
    if (cd_out_dir(dir, 0, overwrite, 0, err, errlen)) return -1;
    cd_model *view = all->viewer > 0 ? one_view(all) : NULL;
    if (all->viewer > 0 && !view) { snprintf(err, errlen, "out of memory"); return -1; }
    const cd_model *m = view ? view : all;   /* the frames; frames.txt and graph.svg: every message */
    int rc = 0;
    char **svgs = calloc((size_t)m->nframes, sizeof *svgs);
    if (!svgs) { snprintf(err, errlen, "out of memory"); view_free(view); return -1; }
    for (int k = 0; k < m->nframes && !rc; k++) {
        char name[32];
        snprintf(name, sizeof name, "frame-%02d.svg", k);
        rc = write_file(dir, name, err, errlen, m, k, NULL);
        if (!rc && !(svgs[k] = svg_string(m, k))) { snprintf(err, errlen, "out of memory"); rc = -1; }
    }
    if (!rc) rc = write_file(dir, "frames.txt", err, errlen, all, -1, NULL);
    if (!rc) rc = write_file(dir, "index.html", err, errlen, m, -1, svgs);
    if (!rc && graph_frame(all) >= 0) rc = write_file(dir, "graph.svg", err, errlen, all, CD_GRAPH, NULL);
    for (int k = 0; k < m->nframes; k++) free(svgs[k]);
    free(svgs);
    view_free(view);
    return rc;
}

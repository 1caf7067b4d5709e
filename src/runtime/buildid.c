/* The ELF build-id of the loaded ORT library: the linker's hash of the build, which `strip` and
 * `objcopy` keep (the note is a loaded section), so a stripped or patched copy still says which
 * build it is where its path and bytes no longer do. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime-impl.h"

typedef struct id_search {
    ElfW(Addr) base; /* the library's load address (its link map's l_addr) */
    char *hex;
    size_t n;
    int found;
} id_search;

/* The NT_GNU_BUILD_ID note of one PT_NOTE segment [p, end), into s->hex. */
static void note_id(const unsigned char *p, const unsigned char *end, id_search *s)
{
    while (!s->found && (size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
        const ElfW(Nhdr) *h = (const void *)p;
        size_t name = (h->n_namesz + 3u) & ~3u, desc = (h->n_descsz + 3u) & ~3u;
        const unsigned char *d = p + sizeof *h + name;
        if (name > (size_t)(end - p) || desc > (size_t)(end - d)) return; /* a malformed note: no id */
        if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 && !memcmp(p + sizeof *h, "GNU", 4) && h->n_descsz &&
            h->n_descsz * 2 < s->n) {
            for (size_t i = 0; i < h->n_descsz; i++) snprintf(s->hex + 2 * i, 3, "%02x", d[i]);
            s->found = 1;
        }
        p = d + desc;
    }
}

static int each_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    id_search *s = ctx;
    if (info->dlpi_addr != s->base) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        note_id(p, p + ph->p_memsz, s);
    }
    return 1;
}

int oq_runtime_build_id(const oq_runtime *rt, char *hex, size_t n)
{
    struct link_map *lm = NULL;
    if (!n) return 0;
    hex[0] = '\0';
    if (!rt || !rt->dl || dlinfo(rt->dl, RTLD_DI_LINKMAP, &lm) || !lm) return 0;
    id_search s = {lm->l_addr, hex, n, 0};
    dl_iterate_phdr(each_object, &s);
    if (!s.found) hex[0] = '\0';
    return s.found;
}

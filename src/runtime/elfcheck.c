/* A look at a library's ELF headers before dlopen. The dynamic loader maps a truncated file's
 * segments as they are declared and dies with SIGBUS on the first page past the end, and it
 * says "No such file or directory" of an existing library built for another machine. */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime-impl.h"

/* This process's machine; 0 leaves the machine unchecked on a host this table lacks. */
#if defined(__x86_64__)
#define OWN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OWN_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define OWN_MACHINE EM_PPC64
#elif defined(__s390x__)
#define OWN_MACHINE EM_S390
#elif defined(__riscv)
#define OWN_MACHINE EM_RISCV
#else
#define OWN_MACHINE 0
#endif

static const char *machine_name(unsigned m)
{
    switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "ARM aarch64";
    case EM_386: return "Intel 80386";
    case EM_ARM: return "ARM (32-bit)";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "IBM S/390";
    case EM_RISCV: return "RISC-V";
    default: return NULL;
    }
}

static void name_machine(unsigned m, char *buf, size_t n)
{
    const char *s = machine_name(m);
    if (s) snprintf(buf, n, "%s", s);
    else snprintf(buf, n, "machine %u", m);
}

static int own_byte_order(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
}

/* Class, byte order and machine against this process's. */
static int foreign(const ElfW(Ehdr) *eh, char *why, size_t n)
{
    const int own_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (eh->e_ident[EI_CLASS] != own_class) {
        snprintf(why, n, "wrong ELF class: a %s-bit library, this process is %s-bit",
                 eh->e_ident[EI_CLASS] == ELFCLASS64 ? "64" : "32", own_class == ELFCLASS64 ? "64" : "32");
        return 1;
    }
    if (eh->e_ident[EI_DATA] != own_byte_order()) {
        snprintf(why, n, "ELF of the other byte order than this process's");
        return 1;
    }
    if (OWN_MACHINE && eh->e_machine != OWN_MACHINE) {
        char theirs[32], ours[32];
        name_machine(eh->e_machine, theirs, sizeof theirs);
        name_machine(OWN_MACHINE, ours, sizeof ours);
        snprintf(why, n, "ELF for %s, this process is %s", theirs, ours);
        return 1;
    }
    return 0;
}

/* The end of the file's last loaded byte, from its program headers; 0 when they cannot be
 * read (the dynamic loader then says what is wrong). */
static uint64_t mapped_end(int fd, const ElfW(Ehdr) *eh, off_t size)
{
    if (eh->e_phentsize != sizeof(ElfW(Phdr))) return 0;
    uint64_t end = (uint64_t)eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr));
    if (end > (uint64_t)size) return end;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        ElfW(Phdr) ph;
        off_t at = (off_t)(eh->e_phoff + (uint64_t)i * sizeof ph);
        if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph) return 0;
        if (ph.p_type != PT_LOAD) continue;
        /* a crafted offset and size must not wrap past 2^64 into a small end */
        uint64_t seg_end = (uint64_t)ph.p_filesz > UINT64_MAX - (uint64_t)ph.p_offset
                               ? UINT64_MAX
                               : (uint64_t)ph.p_offset + (uint64_t)ph.p_filesz;
        if (seg_end > end) end = seg_end;
    }
    return end;
}

static void size_text(uint64_t bytes, char *buf, size_t n)
{
    if (bytes >= 1000000) snprintf(buf, n, "%.1f MB", (double)bytes / 1e6);
    else snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
}

int oq_elf_unloadable(const char *path, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    ElfW(Ehdr) eh;
    int bad = 0;
    /* Not a regular file, or too short to be ELF, or not ELF: dlopen's own reason is clear. */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        !memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
        bad = foreign(&eh, why, n) ? OQ_ELF_FOREIGN : 0;
        uint64_t end = bad ? 0 : mapped_end(fd, &eh, st.st_size);
        if (end > (uint64_t)st.st_size) {
            char want[32], have[32];
            size_text(end, want, sizeof want);
            size_text((uint64_t)st.st_size, have, sizeof have);
            snprintf(why, n, "truncated or damaged: its ELF program headers map %s, the file has %s",
                     want, have);
            bad = OQ_ELF_TRUNCATED;
        }
    }
    close(fd);
    return bad;
}

/* One folder of LD_LIBRARY_PATH, [p, end), "" the current one as the loader reads it. */
static int in_folder(const char *p, size_t len, const char *name, char *out, size_t n)
{
    int k = len ? snprintf(out, n, "%.*s/%s", (int)len, p, name) : snprintf(out, n, "./%s", name);
    struct stat st;
    return k > 0 && (size_t)k < n && stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

int oq_lib_search(const char *name, char *out, size_t n)
{
    const char *env = getenv("LD_LIBRARY_PATH");
    if (!env || getauxval(AT_SECURE) || strchr(name, '/')) return 0; /* a set-id process: ignored */
    for (const char *p = env;;) {
        size_t len = strcspn(p, ":;");
        if (memchr(p, '$', len)) return 0; /* $ORIGIN and its kind: the loader's to expand */
        char why[256];
        if (in_folder(p, len, name, out, n) && oq_elf_unloadable(out, why, sizeof why) != OQ_ELF_FOREIGN) return 1;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

int oq_lib_unfound(const char *name, const char *msg, char *why, size_t n)
{
    size_t len = strlen(name);
    if (!msg) msg = "cannot load";
    /* "NAME: cannot open ..." is NAME itself; "libdep.so: cannot open ..." a library it needs */
    int own = !strncmp(msg, name, len) && msg[len] == ':';
    int unfound = own && strstr(msg + len, "cannot open shared object file") != NULL;
    if (unfound && access(name, F_OK) == 0)
        snprintf(why, n, "not found by the dynamic loader; ./%s exists in the current folder: write ./%s to load it",
                 name, name);
    else
        snprintf(why, n, "%s", own ? msg + len + 1 + strspn(msg + len + 1, " ") : msg);
    return unfound;
}

/* Whether the CUDA execution provider could find a device here, from files alone. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "ortqual/runtime.h"

#define NVIDIA_PCI_VENDOR "0x10de"

/* A PCI device of NVIDIA's under root/sys/bus/pci/devices (GPUs, and NVSwitches beside them). */
static int nvidia_pci(const char *root)
{
    char dir[4096], path[4400], vendor[16];
    snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices", root);
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/vendor", dir, e->d_name);
        FILE *f = fopen(path, "re");
        if (!f) continue;
        found = fgets(vendor, sizeof vendor, f) && !strncmp(vendor, NVIDIA_PCI_VENDOR, strlen(NVIDIA_PCI_VENDOR));
        fclose(f);
    }
    if (d) closedir(d);
    return found;
}

/* A device node a CUDA driver opens: nvidia0.. (discrete GPUs), nvgpu and nvhost-* (Tegra), dxg
 * (WSL 2's GPU). /dev/nvidiactl and nvidia-uvm alone name no GPU. */
static int gpu_node(const char *root)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/dev", root);
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        const char *n = e->d_name;
        found = (!strncmp(n, "nvidia", 6) && n[6] >= '0' && n[6] <= '9') || !strcmp(n, "nvgpu") ||
                !strncmp(n, "nvhost-", 7) || !strcmp(n, "dxg");
    }
    if (d) closedir(d);
    return found;
}

int oq_cuda_device_possible(const char *root)
{
    return gpu_node(root) || nvidia_pci(root);
}

/* normsweep: entry point; dispatches to the subcommands and is the only place that exits. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cli/ns_cli.h"
#include "common/ns_blas.h"
#include "common/ns_build.h"
#include "io/ns_hdf5.h"

typedef int (*ns_cmd_fn)(int argc, char **argv);

typedef struct ns_command {
    const char *name;
    ns_cmd_fn fn;
    const char *summary;
} ns_command;

static const ns_command ns_commands[] = {
    {"run", ns_cmd_run, "run a sweep (the default: `normsweep SWEEP.yaml` means `normsweep run SWEEP.yaml`)"},
    {"validate", ns_cmd_validate, "check a sweep file and report every problem with file:line:column"},
    {"tokenize", ns_cmd_tokenize, "print the GPT-2 token ids of a text file, one per line"},
    {"dump", ns_cmd_dump, "write one shard's attention weights, values (and metrics) to NetCDF"},
    {"mkmodel", ns_cmd_mkmodel, "write a random-weight GPT-2 model (safetensors + config.json)"},
    {"train", ns_cmd_train, "train a GPT-2-layout model with any attention normalizer and temperature"},
    {"train-grid", ns_cmd_train_grid, "train a normalizer x temperature grid of models, then sweep each"},
    {"assets", ns_cmd_assets, "list, fetch and check the tokenizer, corpus and model assets"},
    {"archive", ns_cmd_archive, "pack a run directory into a reproducibility archive"},
    {"verify", ns_cmd_verify, "check an archive and recompute sampled tasks"},
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep [run] [--output PATH] [--checkpoint-dir DIR] [--resume]\n"
            "                       [--stall-timeout SECONDS] [--uncompressed]\n"
            "                       [--model-pin [NAME@]SHA256] [SWEEP.yaml]\n"
            "       normsweep COMMAND [OPTIONS] ...\n"
            "       normsweep --version | --help\n"
            "\n"
            "Measures how softmax-style normalization limits attention (distance collapse,\n"
            "critical top-N, geometric separability, gradient sensitivity) on GPT-2.\n"
            "Launch under MPI for a distributed sweep: mpirun -np 64 normsweep sweeps/ablation.yaml\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof ns_commands / sizeof ns_commands[0]; i++)
        fprintf(out, "  %-10s %s\n", ns_commands[i].name, ns_commands[i].summary);
    fprintf(out,
            "\n"
            "Options:\n"
            "  --version   print the version, git commit, compiler, MPI and BLAS of this build\n"
            "  -h, --help  show this help\n"
            "\n"
            "Run `normsweep COMMAND --help` for a command's options; `man normsweep`.\n"
            "Every number normsweep writes is defined in docs/METRICS.md (installed in\n"
            "PREFIX/share/normsweep/docs).\n"
            "Exit status: 0 success, 1 runtime failure, 2 usage or invalid input (nothing written),\n"
            "3 interrupted by SIGTERM, SIGINT or SIGUSR1 with the journal saved (continue with\n"
            "--resume), 4 verify found a difference.\n");
}

/* The version and what the build is made of (MPI_Get_library_version may be called before
 * MPI_Init). */
static void print_version(void)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "", blas[NS_BLAS_ID_MAX];
    int len = 0, threads = ns_blas_threads();
    const char *var = ns_blas_thread_variable();
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, "\n")] = '\0';
    ns_blas_identity(blas, sizeof blas);
    printf("normsweep %s (git %s)\n", PACKAGE_VERSION, ns_build_git_commit());
    printf("compiler: %s; flags: %s\n", NS_BUILD_CC, NS_BUILD_CFLAGS);
    printf("MPI: %s\n", mpi);
    printf("BLAS: %s\n", blas);
    if (threads > 0 && var)
        printf("BLAS threads: %d by default here; run and verify use 1 per rank unless %s is "
               "set\n", threads, var);
    else
        printf("BLAS threads: not controlled by normsweep (set the library's own variable, e.g. "
               "OMP_NUM_THREADS=1)\n");
}

int main(int argc, char **argv)
{
    ns_hdf5_no_exit_handler(); /* before any NetCDF call: io/ns_hdf5.h says why */
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        print_usage(stdout);
        return NS_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        print_version();
        return NS_EXIT_OK;
    }
    if (argc >= 2) {
        for (size_t i = 0; i < sizeof ns_commands / sizeof ns_commands[0]; i++)
            if (strcmp(argv[1], ns_commands[i].name) == 0)
                return ns_commands[i].fn(argc - 1, argv + 1);
        if (argv[1][0] != '-' && !strchr(argv[1], '.') && !strchr(argv[1], '/')) {
            fprintf(stderr, "normsweep: unknown command '%s' (see normsweep --help)\n", argv[1]);
            return NS_EXIT_USAGE;
        }
    }
    /* No command word: a sweep file and/or run options. */
    argv[0] = (char *)"run";
    return ns_cmd_run(argc, argv);
}

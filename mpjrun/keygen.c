/*
 * p2p-keygen: a new group key (the secret every machine of a network
 * shares) or a user's signing key pair.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sec.h"

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: p2p-keygen --group FILE\n"
            "       p2p-keygen --user FILE\n"
            "\n"
            "  --group FILE  write a new 32-byte group key (mode 0600); copy "
            "it to every\n"
            "                machine of the network and name it in "
            "[network] key_file\n"
            "  --user FILE   write a signing key pair: FILE (secret, 0600) "
            "and FILE.pub\n");
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"group", required_argument, NULL, 'g'},
        {"user", required_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *group = NULL, *user = NULL;
    uint8_t key[SEC_KEY_LEN], pk[SEC_SIGN_PK_LEN], sk[SEC_SIGN_SK_LEN];
    char err[512], pubpath[4096];
    int ch;

    while ((ch = getopt_long(argc, argv, "g:u:hV", opts, NULL)) != -1) {
        switch (ch) {
        case 'g':
            group = optarg;
            break;
        case 'u':
            user = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("p2p-keygen (p2pmpi) %s\n", P2P_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || (group == NULL) == (user == NULL)) {
        fprintf(stderr, "p2p-keygen: give exactly one of --group FILE or "
                        "--user FILE\n");
        usage(stderr);
        return 2;
    }
    if (sec_init() == -1) {
        fprintf(stderr, "p2p-keygen: libsodium failed to initialise\n");
        return 1;
    }
    if (group != NULL) {
        sec_random(key, sizeof key);
        if (sec_keyfile_write(group, key, sizeof key, 0600, err, sizeof err) ==
            -1) {
            fprintf(stderr, "p2p-keygen: %s\n", err);
            return 1;
        }
        sec_wipe(key, sizeof key);
        printf("group key written to %s; copy it to every machine of the "
               "network\n",
               group);
        return 0;
    }
    if ((size_t)snprintf(pubpath, sizeof pubpath, "%s.pub", user) >=
        sizeof pubpath) {
        fprintf(stderr, "p2p-keygen: %s: path too long\n", user);
        return 2;
    }
    sec_sign_keypair(pk, sk);
    if (sec_keyfile_write(user, sk, sizeof sk, 0600, err, sizeof err) == -1 ||
        sec_keyfile_write(pubpath, pk, sizeof pk, 0644, err, sizeof err) ==
            -1) {
        fprintf(stderr, "p2p-keygen: %s\n", err);
        sec_wipe(sk, sizeof sk);
        return 1;
    }
    sec_wipe(sk, sizeof sk);
    printf("user key written to %s, public key to %s\n", user, pubpath);
    return 0;
}

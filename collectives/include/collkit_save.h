/*
 * collkit_save.h — a file save that a crash cannot corrupt (lab 06).
 *
 * A saver file (labs/06-faults/my_save.c) defines two functions and
 * registers them; the program collkit-cc builds around it runs them under the
 * crash harness (`PROG save --dir DIR ...`, plugin/save.c):
 *
 *   int my_save(const char *path, const void *data, size_t n)
 *       Replace PATH's contents with the N bytes at DATA, atomically (a
 *       reader, or a crash, sees the old contents or the new, never a mix)
 *       and durably (once it returns 0, a power loss keeps the new contents).
 *       Returns 0, or -1 with errno set; on failure PATH is as it was and no
 *       temporary file is left. N may be 0: an empty file is a valid save.
 *   void my_recover(const char *path)
 *       Called when a program starts: removes the temporary files a save
 *       that was killed left beside PATH.
 *
 *   CK_REGISTER_SAVER(my_save, my_recover)
 *
 * Temporary files are named PATH.tmp.<something> (the recipe uses
 * PATH.tmp.<pid>): my_recover removes every such name, and the harness counts
 * any other file left in the directory as litter.
 *
 * The harness sees the calls that make or break a save — open, openat,
 * creat, write, pwrite, ftruncate, fsync, fdatasync, rename, renameat, close,
 * unlink, unlinkat — made from the saver file (the program is linked with
 * -Wl,--wrap for each), so the file must make them itself: stdio (fopen,
 * fwrite, fclose) makes its calls inside the C library, out of its sight.
 */
#ifndef COLLKIT_SAVE_H
#define COLLKIT_SAVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*ck_save_fn)(const char *path, const void *data, size_t n);
typedef void (*ck_recover_fn)(const char *path);

/* Registers the program's saver; a second registration stops the program
 * with a message and exit status 2 (one saver per program). Defined by the
 * plug-in program (plugin/save.c), not by the library. */
void ck_register_saver_or_exit(ck_save_fn save, ck_recover_fn recover, const char *file);

#define CK_REGISTER_SAVER(save, recover)                                            \
    __attribute__((constructor)) static void ck_register_saver_##save(void)         \
    {                                                                               \
        ck_register_saver_or_exit(&(save), &(recover), __FILE__);                   \
    }

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_SAVE_H */

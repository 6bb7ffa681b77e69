/* mandelbrot.c: renders the Mandelbrot set. Rows are dealt to processes in turn (so each gets
 * some of the expensive middle rows); each row goes to rank 0 tagged with its number, and rank
 * 0 assembles the picture: mandelbrot.pgm, plus a text preview of 16 lines of 64 characters.
 *   mpiexec -n 4 ./mandelbrot [width height] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define PREVIEW_ROWS 16
#define PREVIEW_COLS 64

static unsigned char escape(double cr, double ci, int max_iter)
{
    double zr = 0, zi = 0;
    int i = 0;
    while (i < max_iter && zr * zr + zi * zi < 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        i++;
    }
    return (unsigned char)(i == max_iter ? 0 : 255 - (i * 255 / max_iter));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int w = argc > 2 ? atoi(argv[1]) : 800, h = argc > 2 ? atoi(argv[2]) : 600, max_iter = 500;
    if (w < 1 || h < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mandelbrot [width height], both at least 1\n");
        MPI_Finalize();
        return 1;
    }
    unsigned char *row = malloc((size_t)w);
    double t0 = MPI_Wtime();
    if (rank != 0) {
        for (int y = rank; y < h; y += size) {
            for (int x = 0; x < w; x++)
                row[x] = escape(-2.2 + 3.2 * x / w, -1.2 + 2.4 * y / h, max_iter);
            MPI_Send(row, w, MPI_UNSIGNED_CHAR, 0, y, MPI_COMM_WORLD);
        }
    } else {
        unsigned char *image = malloc((size_t)w * h);
        int mine = 0;
        for (int y = 0; y < h; y += size, mine++)
            for (int x = 0; x < w; x++)
                image[(size_t)y * w + x] = escape(-2.2 + 3.2 * x / w, -1.2 + 2.4 * y / h, max_iter);
        /* The other rows arrive in any order; the tag says where each one goes. */
        for (int k = 0; k < h - mine; k++) {
            MPI_Status st;
            MPI_Recv(row, w, MPI_UNSIGNED_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            for (int x = 0; x < w; x++)
                image[(size_t)st.MPI_TAG * w + x] = row[x];
        }
        unsigned long sum = 0;
        for (size_t i = 0; i < (size_t)w * h; i++)
            sum += image[i];
        FILE *f = fopen("mandelbrot.pgm", "wb");
        if (f) {
            fprintf(f, "P5\n%d %d\n255\n", w, h);
            fwrite(image, 1, (size_t)w * h, f);
            fclose(f);
        }
        /* The preview: PREVIEW_ROWS lines of PREVIEW_COLS characters (fewer for a smaller
         * image), each character the pixel at the top left of its cell. */
        int rows = h < PREVIEW_ROWS ? h : PREVIEW_ROWS, cols = w < PREVIEW_COLS ? w : PREVIEW_COLS;
        for (int py = 0; py < rows; py++) {
            int y = (int)((long long)py * h / rows);
            for (int px = 0; px < cols; px++) {
                int x = (int)((long long)px * w / cols);
                putchar(" .:-=+*#%@"[image[(size_t)y * w + x] * 9 / 255]);
            }
            putchar('\n');
        }
        printf("%dx%d image (checksum %lu) on %d processes in %.3f s: mandelbrot.pgm\n", w, h, sum, size,
               MPI_Wtime() - t0);
        free(image);
    }
    free(row);
    MPI_Finalize();
    return 0;
}

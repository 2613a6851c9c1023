/* The offload library connect_late.c dlopens: R target regions, each
 * map(tofrom: x[0:N]) of ints: per region alloc x, to x (N*4), kernel,
 * from x (N*4), delete x. Returns the sum of x. */
#define R 5
#define N 100

long lib_run(void)
{
    int x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    for (int r = 0; r < R; r++) {
#pragma omp target map(tofrom : x[0:N])
        for (int i = 0; i < N; i++)
            x[i] += 1;
    }
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += x[i];
    return sum;
}

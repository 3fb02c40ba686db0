/* What a lock costs on this machine, one thread, no contention (docs/via.md, "Where the time
 * goes"): a loop of plain increments; of an acquiring compare-exchange + a releasing swap
 * around one (std::sync::Mutex's uncontended lock and unlock); of the compare-exchange + a
 * plain releasing store (icn-via's lock.rs); of an increment + a full fence (mfence).
 *   gcc -O2 -o /tmp/lockcost crates/icn-via/bench/lockcost.c && /tmp/lockcost
 */
#include <stdio.h>
#include <time.h>
#include <stdatomic.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(){
  volatile long x=0; _Atomic int m=0; long n=100000000;
  double t0=now(); for(long i=0;i<n;i++){ x++; } double t1=now();
  for(long i=0;i<n;i++){ int e=0; atomic_compare_exchange_strong_explicit(&m,&e,1,memory_order_acquire,memory_order_relaxed); x++; atomic_exchange_explicit(&m,0,memory_order_release);} double t2=now();
  for(long i=0;i<n;i++){ int e=0; atomic_compare_exchange_strong_explicit(&m,&e,1,memory_order_acquire,memory_order_relaxed); x++; atomic_store_explicit(&m,0,memory_order_release);} double t3=now();
  for(long i=0;i<n;i++){ x++; atomic_thread_fence(memory_order_seq_cst);} double t4=now();
  printf("plain %.2f ns, cas+xchg %.2f ns, cas+store %.2f ns, mfence %.2f ns\n",(t1-t0)/n,(t2-t1)/n,(t3-t2)/n,(t4-t3)/n);
}

// Kernel cost of getting a file's bytes into a process, alone and from two threads of one process.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <pthread.h>
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int fd, mode, nthreads; static size_t n; static unsigned char *map;
static void *work(void *arg){
  long k=(long)arg; size_t lo=n/nthreads*k, hi=k==nthreads-1?n:n/nthreads*(k+1); lo&=~4095UL;
  unsigned long sum=0; size_t chunk=4<<20;
  if(mode==1){ size_t c=256<<10; unsigned char*b=malloc(c);
    for(size_t off=lo;off<hi;off+=c){ size_t want=off+c>hi?hi-off:c; ssize_t r=pread(fd,b,want,off); for(ssize_t i=0;i<r;i+=64) sum+=b[i]; }
  } else {
    for(size_t off=lo;off<hi;off+=chunk){ size_t len=off+chunk>hi?hi-off:chunk;
      if(mode==2) madvise(map+off,len,MADV_POPULATE_READ);
      for(size_t i=off;i<off+len;i+=64) sum+=map[i];
      madvise(map+off,len&~4095UL,MADV_DONTNEED);
    }
  }
  return (void*)sum;
}
int main(int argc,char**argv){
  mode=atoi(argv[2]); nthreads=atoi(argv[3]); fd=open(argv[1],O_RDONLY); struct stat st; fstat(fd,&st); n=st.st_size;
  double t0=now();
  if(mode!=1) map=mmap(0,n,PROT_READ,MAP_PRIVATE,fd,0);
  pthread_t t[64]; unsigned long sum=0;
  for(long k=0;k<nthreads;k++) pthread_create(&t[k],0,work,(void*)k);
  for(long k=0;k<nthreads;k++){ void*r; pthread_join(t[k],&r); sum+=(unsigned long)r; }
  struct rusage ru; getrusage(RUSAGE_SELF,&ru);
  printf("%s threads %d: wall %.1f ms user %.1f sys %.1f (sum %lu)\n", mode==0?"mmap+fault":mode==1?"pread 256K":"mmap+populate", nthreads,(now()-t0)*1e3,
    ru.ru_utime.tv_sec*1e3+ru.ru_utime.tv_usec/1e3, ru.ru_stime.tv_sec*1e3+ru.ru_stime.tv_usec/1e3, sum%1000);
}

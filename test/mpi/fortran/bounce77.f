! bounce77.f: a bounce program written the way the F77 codes of lecture notes are (fixed form,
! include "mpif.h", implicit real*8, lower-case names, mpi_real8 buffers, call flush(6)):
! even ranks send to the next odd rank and get the message back, for lengths 0 to 100000
! reals, timing with mpi_wtime. Checks every value that came back; needs an even size.
      program bounce77
      parameter (maxcount=100000)
      parameter (nrepeats=20)
      parameter (nsizes=6)
      implicit real*8 (a-h,o-z)
      include "mpif.h"
      dimension sbuf(maxcount), rbuf(maxcount)
      dimension length(nsizes)
      integer status(mpi_status_size)
      data length /0, 1, 10, 100, 10000, 100000/
      call mpi_init(ierr)
      call mpi_comm_size(mpi_comm_world, nnodes, ierr)
      call mpi_comm_rank(mpi_comm_world, nodeid, ierr)
      if (nodeid .eq. 0) write(*,*) 'number of processors =', nnodes
      if (mod(nnodes, 2) .ne. 0) then
         if (nodeid .eq. 0) write(6,*) 'FAIL: needs an even size'
         call mpi_abort(mpi_comm_world, 1, ierr)
      end if
      nerr = 0
      do n = 1, maxcount
         sbuf(n) = dble(n) + 0.5d0 * nodeid
         rbuf(n) = 0.0d0
      end do
      do ns = 1, nsizes
         time1 = mpi_wtime()
         do nr = 1, nrepeats
            if (mod(nodeid, 2) .eq. 0) then
               call mpi_send(sbuf, length(ns), mpi_real8, nodeid+1, 1,
     &              mpi_comm_world, ierr)
               call mpi_recv(rbuf, length(ns), mpi_real8, nodeid+1, 1,
     &              mpi_comm_world, status, ierr)
            else
               call mpi_recv(rbuf, length(ns), mpi_real8, nodeid-1, 1,
     &              mpi_comm_world, status, ierr)
               call mpi_send(rbuf, length(ns), mpi_real8, nodeid-1, 1,
     &              mpi_comm_world, ierr)
            end if
            call mpi_get_count(status, mpi_real8, icount, ierr)
            if (icount .ne. length(ns)) nerr = nerr + 1
         end do
         time2 = mpi_wtime()
         if (mod(nodeid, 2) .eq. 0) then
            do n = 1, length(ns)
               if (rbuf(n) .ne. sbuf(n)) nerr = nerr + 1
            end do
         end if
         if (nodeid .eq. 0) then
            write(6, fmt='(a,i9,a,10x,a,f10.4,a)') 'msglen =',
     &           8*length(ns), ' bytes,', 'elapsed time =',
     &           0.5d3*(time2-time1)/nrepeats, ' msec'
            call flush(6)
         end if
      end do
      call mpi_allreduce(nerr, ntot, 1, mpi_integer, mpi_sum,
     &     mpi_comm_world, ierr)
      if (nodeid .eq. 0 .and. ntot .eq. 0) write(6,*) 'No Errors'
      if (ntot .ne. 0) then
         write(6,*) 'FAIL rank', nodeid, ': ', nerr, ' wrong values'
         call mpi_abort(mpi_comm_world, 1, ierr)
      end if
      call mpi_finalize(ierr)
      end

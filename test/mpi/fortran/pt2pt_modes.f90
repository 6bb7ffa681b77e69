! pt2pt_modes.f90: point-to-point through the Fortran bindings (use mpi).
!
! Every rank sends to its right neighbour and receives from its left one (a ring), so the test
! runs at any size; with one process every message goes to itself. Covered: the four send modes
! (MPI_Send, MPI_Ssend, MPI_Bsend with an attached buffer, MPI_Rsend after the receive is
! posted), MPI_Isend/Irecv/Wait/Waitall/Test, MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Probe and
! MPI_Get_count, status arrays, MPI_STATUS_IGNORE/MPI_STATUSES_IGNORE, MPI_ANY_SOURCE and
! MPI_ANY_TAG, on INTEGER, DOUBLE PRECISION, REAL, COMPLEX, LOGICAL and CHARACTER data.

! The four send modes, numbered for the program and for send_in_mode (after it).
module pt2pt_modes_defs
  implicit none
  integer, parameter :: MODE_SEND = 1, MODE_SSEND = 2, MODE_BSEND = 3, MODE_RSEND = 4
end module pt2pt_modes_defs

program pt2pt_modes
  use mpi
  use mtest
  use pt2pt_modes_defs
  implicit none

  character(len=5), parameter :: mode_names(4) = (/ 'Send ', 'Ssend', 'Bsend', 'Rsend' /)
  integer, parameter :: N = 7            ! elements per message
  integer, parameter :: BUF_INTS = 4096  ! attached Bsend buffer, in INTEGERs (16 KiB)

  integer :: rank, nprocs, left, right, ierr, mode
  integer :: bbuf(BUF_INTS), bsize, detach_size
  external :: send_in_mode ! takes a buffer of any type, so it has no explicit interface

  call mt_init()
  rank = mt_rank
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)

  ! The Bsend buffer: room for every Bsend of one round (one message per type) with overhead.
  bsize = BUF_INTS * 4
  call MPI_Buffer_attach(bbuf, bsize, ierr)
  call check_int('MPI_Buffer_attach ierror', ierr, MPI_SUCCESS)

  do mode = MODE_SEND, MODE_RSEND
     call ring_integer(mode)
     call ring_double(mode)
     call ring_real(mode)
     call ring_complex(mode)
     call ring_logical(mode)
     call ring_character(mode)
  end do

  ! Detach waits until the buffered messages are out and gives back the size attached.
  detach_size = -1
  call MPI_Buffer_detach(bbuf, detach_size, ierr)
  call check_int('MPI_Buffer_detach ierror', ierr, MPI_SUCCESS)
  call check_int('MPI_Buffer_detach size', detach_size, bsize)

  call test_nonblocking()
  call test_sendrecv()
  call test_sendrecv_replace()
  call test_probe()
  call test_any()

  call mt_finish()

contains

  ! Checks the status of a message from `source` with `tag` holding `count` items of `dtype`.
  subroutine check_status(what, status, source, tag, dtype, count)
    character(len=*), intent(in) :: what
    integer, intent(in) :: status(MPI_STATUS_SIZE), source, tag, dtype, count
    integer :: got, ierr2
    call check_int(what // ' status(MPI_SOURCE)', status(MPI_SOURCE), source)
    call check_int(what // ' status(MPI_TAG)', status(MPI_TAG), tag)
    call MPI_Get_count(status, dtype, got, ierr2)
    call check_int(what // ' MPI_Get_count ierror', ierr2, MPI_SUCCESS)
    call check_int(what // ' MPI_Get_count', got, count)
  end subroutine check_status

  character(len=40) function label(mode, tname)
    integer, intent(in) :: mode
    character(len=*), intent(in) :: tname
    label = 'MPI_' // trim(mode_names(mode)) // ' ' // tname
  end function label

  ! The tag of a ring exchange: different for every mode and type.
  integer function ring_tag(mode, t)
    integer, intent(in) :: mode, t
    ring_tag = 100 * mode + t
  end function ring_tag

  ! ---------------------------------------------------------------- the four modes
  ! Each ring_<type> posts MPI_Irecv from the left, sends to the right in the given mode
  ! (send_in_mode), then waits for both and checks what arrived.

  subroutine ring_integer(mode)
    integer, intent(in) :: mode
    integer :: sbuf(N), rbuf(N), reqs(2), stats(MPI_STATUS_SIZE, 2), i, tag
    tag = ring_tag(mode, 1)
    do i = 1, N
       sbuf(i) = 1000 * rank + 10 * mode + i
       rbuf(i) = -1
    end do
    call MPI_Irecv(rbuf, N, MPI_INTEGER, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call send_in_mode(mode, sbuf, N, MPI_INTEGER, right, tag, reqs(2), ierr)
    call check_int(trim(label(mode, 'INTEGER')) // ' ierror', ierr, MPI_SUCCESS)
    call MPI_Waitall(2, reqs, stats, ierr)
    call check_int(trim(label(mode, 'INTEGER')) // ' MPI_Waitall ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Waitall request not freed', reqs(1), MPI_REQUEST_NULL)
    call check_status(trim(label(mode, 'INTEGER')), stats(:, 1), left, tag, MPI_INTEGER, N)
    do i = 1, N
       call check_int(trim(label(mode, 'INTEGER')) // ' data', rbuf(i), 1000 * left + 10 * mode + i)
    end do
  end subroutine ring_integer

  subroutine ring_double(mode)
    integer, intent(in) :: mode
    double precision :: sbuf(N), rbuf(N)
    integer :: reqs(2), status(MPI_STATUS_SIZE), i, tag
    tag = ring_tag(mode, 2)
    do i = 1, N
       sbuf(i) = dble(rank) * 1.0d6 + dble(mode) + dble(i) * 0.125d0
       rbuf(i) = -1.0d0
    end do
    call MPI_Irecv(rbuf, N, MPI_DOUBLE_PRECISION, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call send_in_mode(mode, sbuf, N, MPI_DOUBLE_PRECISION, right, tag, reqs(2), ierr)
    call check_int(trim(label(mode, 'DOUBLE PRECISION')) // ' ierror', ierr, MPI_SUCCESS)
    ! The receive with a status, the send with MPI_STATUS_IGNORE.
    call MPI_Wait(reqs(1), status, ierr)
    call check_int('MPI_Wait ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Wait request not freed', reqs(1), MPI_REQUEST_NULL)
    call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
    call check_status(trim(label(mode, 'DOUBLE PRECISION')), status, left, tag, &
         MPI_DOUBLE_PRECISION, N)
    do i = 1, N
       call check_dbl(trim(label(mode, 'DOUBLE PRECISION')) // ' data', rbuf(i), &
            dble(left) * 1.0d6 + dble(mode) + dble(i) * 0.125d0)
    end do
  end subroutine ring_double

  subroutine ring_real(mode)
    integer, intent(in) :: mode
    real :: sbuf(N), rbuf(N)
    integer :: reqs(2), i, tag
    tag = ring_tag(mode, 3)
    do i = 1, N
       sbuf(i) = real(rank) * 100.0 + real(mode) + real(i) * 0.5
       rbuf(i) = -1.0
    end do
    call MPI_Irecv(rbuf, N, MPI_REAL, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call send_in_mode(mode, sbuf, N, MPI_REAL, right, tag, reqs(2), ierr)
    call check_int(trim(label(mode, 'REAL')) // ' ierror', ierr, MPI_SUCCESS)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check_int('MPI_Waitall(MPI_STATUSES_IGNORE) ierror', ierr, MPI_SUCCESS)
    do i = 1, N
       call check_dbl(trim(label(mode, 'REAL')) // ' data', dble(rbuf(i)), &
            dble(real(left) * 100.0 + real(mode) + real(i) * 0.5))
    end do
  end subroutine ring_real

  subroutine ring_complex(mode)
    integer, intent(in) :: mode
    complex :: sbuf(N), rbuf(N), expected
    integer :: reqs(2), stats(MPI_STATUS_SIZE, 2), i, tag
    tag = ring_tag(mode, 4)
    do i = 1, N
       sbuf(i) = cmplx(real(rank * 10 + i), -real(mode * 10 + i))
       rbuf(i) = (0.0, 0.0)
    end do
    call MPI_Irecv(rbuf, N, MPI_COMPLEX, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call send_in_mode(mode, sbuf, N, MPI_COMPLEX, right, tag, reqs(2), ierr)
    call check_int(trim(label(mode, 'COMPLEX')) // ' ierror', ierr, MPI_SUCCESS)
    call MPI_Waitall(2, reqs, stats, ierr)
    call check_status(trim(label(mode, 'COMPLEX')), stats(:, 1), left, tag, MPI_COMPLEX, N)
    do i = 1, N
       expected = cmplx(real(left * 10 + i), -real(mode * 10 + i))
       call check_dbl(trim(label(mode, 'COMPLEX')) // ' data (real part)', dble(real(rbuf(i))), &
            dble(real(expected)))
       call check_dbl(trim(label(mode, 'COMPLEX')) // ' data (imaginary part)', &
            dble(aimag(rbuf(i))), dble(aimag(expected)))
    end do
  end subroutine ring_complex

  subroutine ring_logical(mode)
    integer, intent(in) :: mode
    logical :: sbuf(N), rbuf(N)
    integer :: reqs(2), stats(MPI_STATUS_SIZE, 2), i, tag
    tag = ring_tag(mode, 5)
    do i = 1, N
       sbuf(i) = mod(rank + mode + i, 2) == 0
       rbuf(i) = .not. sbuf(i) .and. mod(i, 3) == 0
    end do
    call MPI_Irecv(rbuf, N, MPI_LOGICAL, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call send_in_mode(mode, sbuf, N, MPI_LOGICAL, right, tag, reqs(2), ierr)
    call check_int(trim(label(mode, 'LOGICAL')) // ' ierror', ierr, MPI_SUCCESS)
    call MPI_Waitall(2, reqs, stats, ierr)
    call check_status(trim(label(mode, 'LOGICAL')), stats(:, 1), left, tag, MPI_LOGICAL, N)
    do i = 1, N
       call check_log(trim(label(mode, 'LOGICAL')) // ' data', rbuf(i), &
            mod(left + mode + i, 2) == 0)
    end do
  end subroutine ring_logical

  subroutine ring_character(mode)
    integer, intent(in) :: mode
    character(len=N) :: sbuf, rbuf, expected
    integer :: reqs(2), stats(MPI_STATUS_SIZE, 2), i, tag
    tag = ring_tag(mode, 6)
    do i = 1, N
       sbuf(i:i) = achar(iachar('a') + mod(rank + mode + i, 26))
       expected(i:i) = achar(iachar('a') + mod(left + mode + i, 26))
    end do
    rbuf = '#######'
    call MPI_Irecv(rbuf, N, MPI_CHARACTER, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call send_in_mode(mode, sbuf, N, MPI_CHARACTER, right, tag, reqs(2), ierr)
    call check_int(trim(label(mode, 'CHARACTER')) // ' ierror', ierr, MPI_SUCCESS)
    call MPI_Waitall(2, reqs, stats, ierr)
    call check_status(trim(label(mode, 'CHARACTER')), stats(:, 1), left, tag, MPI_CHARACTER, N)
    call check_str(trim(label(mode, 'CHARACTER')) // ' data', rbuf, expected)
  end subroutine ring_character

  ! ---------------------------------------------------------------- nonblocking
  ! MPI_Isend/MPI_Irecv in the ring, completed with MPI_Test (the receive, polled until done)
  ! and MPI_Wait (the send); then several messages at once completed with MPI_Waitall.
  subroutine test_nonblocking()
    integer, parameter :: M = 5
    integer :: sbuf(N), rbuf(N), rreq, sreq, status(MPI_STATUS_SIZE), i, k, polls
    integer :: reqs(2 * M), stats(MPI_STATUS_SIZE, 2 * M)
    double precision :: dsend(N, M), drecv(N, M)
    logical :: flag

    do i = 1, N
       sbuf(i) = -(1000 * rank + i)
       rbuf(i) = 0
    end do
    call MPI_Irecv(rbuf, N, MPI_INTEGER, left, 7, MPI_COMM_WORLD, rreq, ierr)
    call MPI_Isend(sbuf, N, MPI_INTEGER, right, 7, MPI_COMM_WORLD, sreq, ierr)
    call check_int('MPI_Isend ierror', ierr, MPI_SUCCESS)
    flag = .false.
    polls = 0
    do while (.not. flag)
       call MPI_Test(rreq, flag, status, ierr)
       polls = polls + 1
       if (ierr /= MPI_SUCCESS) exit
    end do
    call check_int('MPI_Test ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Test did not free the request', rreq, MPI_REQUEST_NULL)
    call check_status('MPI_Irecv/MPI_Test', status, left, 7, MPI_INTEGER, N)
    call MPI_Wait(sreq, status, ierr)
    call check_int('MPI_Wait(send) ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Wait(send) request not freed', sreq, MPI_REQUEST_NULL)
    do i = 1, N
       call check_int('MPI_Isend/MPI_Irecv data', rbuf(i), -(1000 * left + i))
    end do
    ! MPI_Test on a null request: flag true at once.
    flag = .false.
    call MPI_Test(rreq, flag, MPI_STATUS_IGNORE, ierr)
    call check_log('MPI_Test(MPI_REQUEST_NULL) flag', flag, .true.)

    ! M messages in flight to the right, each with its own tag, received in reverse order.
    do k = 1, M
       do i = 1, N
          dsend(i, k) = dble(rank) + dble(k) * 0.5d0 + dble(i) * 1.0d3
          drecv(i, k) = 0.0d0
       end do
    end do
    do k = 1, M
       call MPI_Irecv(drecv(1, k), N, MPI_DOUBLE_PRECISION, left, 20 + M + 1 - k, &
            MPI_COMM_WORLD, reqs(k), ierr)
    end do
    do k = 1, M
       call MPI_Isend(dsend(1, k), N, MPI_DOUBLE_PRECISION, right, 20 + k, MPI_COMM_WORLD, &
            reqs(M + k), ierr)
    end do
    call MPI_Waitall(2 * M, reqs, stats, ierr)
    call check_int('MPI_Waitall ierror', ierr, MPI_SUCCESS)
    do k = 1, M
       call check_int('MPI_Waitall request not freed', reqs(k), MPI_REQUEST_NULL)
       call check_status('MPI_Waitall', stats(:, k), left, 20 + M + 1 - k, &
            MPI_DOUBLE_PRECISION, N)
       do i = 1, N
          call check_dbl('MPI_Waitall data', drecv(i, k), &
               dble(left) + dble(M + 1 - k) * 0.5d0 + dble(i) * 1.0d3)
       end do
    end do
  end subroutine test_nonblocking

  ! ---------------------------------------------------------------- sendrecv
  subroutine test_sendrecv()
    double precision :: sbuf(N), rbuf(N)
    character(len=12) :: cs, cr
    integer :: status(MPI_STATUS_SIZE), i
    do i = 1, N
       sbuf(i) = dble(rank) * 3.0d0 + dble(i) / 4.0d0
       rbuf(i) = -7.0d0
    end do
    call MPI_Sendrecv(sbuf, N, MPI_DOUBLE_PRECISION, right, 31, &
         rbuf, N, MPI_DOUBLE_PRECISION, left, 31, MPI_COMM_WORLD, status, ierr)
    call check_int('MPI_Sendrecv ierror', ierr, MPI_SUCCESS)
    call check_status('MPI_Sendrecv', status, left, 31, MPI_DOUBLE_PRECISION, N)
    do i = 1, N
       call check_dbl('MPI_Sendrecv data', rbuf(i), dble(left) * 3.0d0 + dble(i) / 4.0d0)
    end do
    ! CHARACTER both ways, with MPI_STATUS_IGNORE; receiving fewer than the buffer holds.
    write (cs, '(a,i4.4)') 'rank', rank
    cr = '************'
    call MPI_Sendrecv(cs, 8, MPI_CHARACTER, right, 32, cr, 12, MPI_CHARACTER, left, 32, &
         MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check_int('MPI_Sendrecv(CHARACTER) ierror', ierr, MPI_SUCCESS)
    write (cs, '(a,i4.4)') 'rank', left
    cs(9:12) = '****'
    call check_str('MPI_Sendrecv CHARACTER data', cr, cs)
  end subroutine test_sendrecv

  subroutine test_sendrecv_replace()
    integer :: ibuf(N), status(MPI_STATUS_SIZE), i
    complex :: cbuf(3)
    do i = 1, N
       ibuf(i) = 77 * rank + i
    end do
    call MPI_Sendrecv_replace(ibuf, N, MPI_INTEGER, right, 41, left, 41, MPI_COMM_WORLD, &
         status, ierr)
    call check_int('MPI_Sendrecv_replace ierror', ierr, MPI_SUCCESS)
    call check_status('MPI_Sendrecv_replace', status, left, 41, MPI_INTEGER, N)
    do i = 1, N
       call check_int('MPI_Sendrecv_replace data', ibuf(i), 77 * left + i)
    end do
    do i = 1, 3
       cbuf(i) = cmplx(real(rank), real(i))
    end do
    call MPI_Sendrecv_replace(cbuf, 3, MPI_COMPLEX, right, 42, MPI_ANY_SOURCE, MPI_ANY_TAG, &
         MPI_COMM_WORLD, status, ierr)
    call check_int('MPI_Sendrecv_replace(COMPLEX) ierror', ierr, MPI_SUCCESS)
    call check_status('MPI_Sendrecv_replace(COMPLEX, MPI_ANY_SOURCE, MPI_ANY_TAG)', status, &
         left, 42, MPI_COMPLEX, 3)
    do i = 1, 3
       call check_dbl('MPI_Sendrecv_replace COMPLEX real part', dble(real(cbuf(i))), dble(left))
       call check_dbl('MPI_Sendrecv_replace COMPLEX imaginary part', dble(aimag(cbuf(i))), &
            dble(i))
    end do
  end subroutine test_sendrecv_replace

  ! ---------------------------------------------------------------- probe
  ! Each rank sends a message whose length depends on the sender; the receiver learns the
  ! source, tag and length with MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) and MPI_Get_count, then
  ! receives exactly that.
  subroutine test_probe()
    integer :: sreq, status(MPI_STATUS_SIZE), count, nsend, i, src, tag
    double precision :: sbuf(N + 4)
    double precision, allocatable :: rbuf(:)
    call MPI_Barrier(MPI_COMM_WORLD, ierr) ! no earlier message is left to match
    nsend = 1 + mod(rank, 4) + 1
    do i = 1, nsend
       sbuf(i) = dble(rank) + dble(i) * 0.25d0
    end do
    call MPI_Isend(sbuf, nsend, MPI_DOUBLE_PRECISION, right, 50 + rank, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
    call check_int('MPI_Probe ierror', ierr, MPI_SUCCESS)
    src = status(MPI_SOURCE)
    tag = status(MPI_TAG)
    call check_int('MPI_Probe status(MPI_SOURCE)', src, left)
    call check_int('MPI_Probe status(MPI_TAG)', tag, 50 + left)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    call check_int('MPI_Get_count after MPI_Probe', count, 1 + mod(left, 4) + 1)
    if (count < 0 .or. count > N + 4) count = N + 4
    allocate (rbuf(count))
    rbuf = -1.0d0
    if (src < 0 .or. src >= nprocs) src = left
    call MPI_Recv(rbuf, count, MPI_DOUBLE_PRECISION, src, tag, MPI_COMM_WORLD, status, ierr)
    call check_int('MPI_Recv after MPI_Probe ierror', ierr, MPI_SUCCESS)
    call check_status('MPI_Recv after MPI_Probe', status, left, 50 + left, &
         MPI_DOUBLE_PRECISION, 1 + mod(left, 4) + 1)
    do i = 1, min(count, 1 + mod(left, 4) + 1)
       call check_dbl('MPI_Recv after MPI_Probe data', rbuf(i), dble(left) + dble(i) * 0.25d0)
    end do
    deallocate (rbuf)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
    ! MPI_Get_count in bytes of the same message shape: count * 8 as MPI_BYTE.
    call MPI_Isend(sbuf, 3, MPI_DOUBLE_PRECISION, right, 59, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Probe(left, 59, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_BYTE, count, ierr)
    call check_int('MPI_Get_count(MPI_BYTE) after MPI_Probe', count, 24)
    call MPI_Recv(sbuf(N + 1), 3, MPI_DOUBLE_PRECISION, left, 59, MPI_COMM_WORLD, &
         MPI_STATUS_IGNORE, ierr)
    call check_int('MPI_Recv(MPI_STATUS_IGNORE) ierror', ierr, MPI_SUCCESS)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
  end subroutine test_probe

  ! ---------------------------------------------------------------- wildcards
  ! A receive with MPI_ANY_SOURCE and MPI_ANY_TAG: the status says who sent it with which tag,
  ! and a receive larger than the message: MPI_Get_count gives what arrived.
  subroutine test_any()
    integer :: sbuf(3), rbuf(10), rreq, sreq, status(MPI_STATUS_SIZE), i
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    sbuf = (/ rank, 2 * rank, 3 * rank + 1 /)
    rbuf = -5
    call MPI_Irecv(rbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, rreq, ierr)
    call MPI_Isend(sbuf, 3, MPI_INTEGER, right, 60 + rank, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Wait(rreq, status, ierr)
    call check_int('MPI_Wait(MPI_ANY_SOURCE receive) ierror', ierr, MPI_SUCCESS)
    call check_status('MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG)', status, left, 60 + left, &
         MPI_INTEGER, 3)
    call check_int('MPI_ANY_SOURCE data(1)', rbuf(1), left)
    call check_int('MPI_ANY_SOURCE data(2)', rbuf(2), 2 * left)
    call check_int('MPI_ANY_SOURCE data(3)', rbuf(3), 3 * left + 1)
    do i = 4, 10
       call check_int('MPI_ANY_SOURCE receive wrote past the message', rbuf(i), -5)
    end do
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
  end subroutine test_any

end program pt2pt_modes

! Sends n items of dtype from sbuf to dest with tag on MPI_COMM_WORLD in the given mode, after a
! barrier for MPI_Rsend (every receive of the round is posted by then). With one process (each
! message to itself) a mode that could wait for the receive uses its nonblocking form, and req
! is its request, MPI_REQUEST_NULL otherwise; MPI_Bsend never waits for the receiver.
! sbuf may be of any type: like MPI's choice arguments, it is passed on as it is, which is why
! this is an external procedure called without an explicit interface.
subroutine send_in_mode(mode, sbuf, n, dtype, dest, tag, req, ierr)
  use mpi
  use pt2pt_modes_defs
  implicit none
  integer, intent(in) :: mode, n, dtype, dest, tag
  integer :: sbuf(*)
  integer, intent(out) :: req, ierr
  integer :: nprocs
  logical :: alone
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  alone = nprocs == 1
  req = MPI_REQUEST_NULL
  if (mode == MODE_RSEND) call MPI_Barrier(MPI_COMM_WORLD, ierr)
  select case (mode)
  case (MODE_SEND)
     if (alone) then
        call MPI_Isend(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, req, ierr)
     else
        call MPI_Send(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, ierr)
     end if
  case (MODE_SSEND)
     if (alone) then
        call MPI_Issend(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, req, ierr)
     else
        call MPI_Ssend(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, ierr)
     end if
  case (MODE_BSEND)
     call MPI_Bsend(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, ierr)
  case (MODE_RSEND)
     if (alone) then
        call MPI_Irsend(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, req, ierr)
     else
        call MPI_Rsend(sbuf, n, dtype, dest, tag, MPI_COMM_WORLD, ierr)
     end if
  end select
end subroutine send_in_mode

! f08.f90: `use mpi_f08`: handle types and their comparison, TYPE(MPI_Status), the optional
! ierror, point-to-point and collectives (MPI_IN_PLACE), a derived type, the large-count forms
! (generic MPI_Send with an INTEGER(KIND=MPI_COUNT_KIND) count, MPI_Type_get_extent_c), strings,
! errors returned in ierror, a user reduction and attribute callbacks written for mpi_f08, and
! MPI_Sizeof. Works at any size.
module f08_callbacks
  use mpi_f08
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  implicit none
  integer :: copies = 0
contains
  ! A reduction in the mpi_f08 form: the vectors come as C pointers.
  subroutine absmax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    if (datatype /= MPI_INTEGER) stop 'absmax: not MPI_INTEGER'
    do i = 1, len
      b(i) = max(abs(a(i)), abs(b(i)))
    end do
  end subroutine absmax

  subroutine copy_plus_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = val_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_plus_one
end module f08_callbacks

program f08
  use mpi_f08
  use mtest
  use f08_callbacks
  implicit none
  integer :: rank, nprocs, i, ierr, total, count, resultlen, errclass, keyval, nbytes
  integer(kind=MPI_COUNT_KIND) :: bigcount, biglb
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, attr
  logical :: flag
  type(MPI_Comm) :: dup, dup2
  type(MPI_Status) :: status, status2
  integer :: fstatus(MPI_STATUS_SIZE)
  type(MPI_Request) :: reqs(2), many(40)
  type(MPI_Status) :: statuses(3)
  integer :: idx, outcount, indices(3), big(40), k, sec(9, 9), sec2(9, 9)
  type(MPI_Datatype) :: column
  type(MPI_Op) :: op
  double precision :: a(10), b(10), grid(4, 3), col(4)
  integer, allocatable :: gathered(:), sendall(:), recvall(:)
  integer :: vals(3)
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init()                       ! ierror is optional everywhere
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  mt_rank = rank
  call check_int('MPI_Comm_size ierror', ierr, MPI_SUCCESS)

  ! handles: types, comparison, null after free
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  if (dup == MPI_COMM_WORLD .or. dup == MPI_COMM_NULL) call mt_fail('MPI_Comm_dup gave a predefined handle')
  if (.not. (MPI_INTEGER /= MPI_REAL)) call mt_fail('/= on datatypes')

  ! point-to-point: a ring with Isend/Irecv, the status as TYPE(MPI_Status)
  a = [(dble(10 * rank + i), i = 1, 10)]
  call MPI_Irecv(b, 10, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, reqs(1))
  call MPI_Isend(a, 10, MPI_DOUBLE_PRECISION, modulo(rank + 1, nprocs), 7, dup, reqs(2))
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  call MPI_Wait(reqs(1), status)
  call check_int('ring source', status%MPI_SOURCE, modulo(rank - 1, nprocs))
  call check_int('ring tag', status%MPI_TAG, 7)
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count)
  call check_int('MPI_Get_count', count, 10)
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, bigcount)   ! the MPI_Count form
  call check_int('MPI_Get_count (MPI_Count form)', int(bigcount), 10)
  call check_dbl('ring data', b(10), dble(10 * modulo(rank - 1, nprocs) + 10))
  call MPI_Status_f082f(status, fstatus)       ! TYPE(MPI_Status) <-> INTEGER(MPI_STATUS_SIZE)
  call check_int('MPI_Status_f082f source', fstatus(MPI_SOURCE), status%MPI_SOURCE)
  call check_int('MPI_Status_f082f tag', fstatus(MPI_TAG), 7)
  fstatus(MPI_TAG) = 8
  call MPI_Status_f2f08(fstatus, status2)
  call check_int('MPI_Status_f2f08 tag', status2%MPI_TAG, 8)
  call MPI_Get_count(status2, MPI_DOUBLE_PRECISION, count)
  call check_int('MPI_Get_count of a converted status', count, 10)
  call MPI_F_sync_reg(b)
  if (reqs(1) /= MPI_REQUEST_NULL) call mt_fail('request not MPI_REQUEST_NULL after MPI_Wait')

  ! indices are Fortran's (from 1): only request 2 of 3 can complete (a message to itself)
  call MPI_Irecv(b, 1, MPI_DOUBLE_PRECISION, rank, 101, dup, many(1))
  call MPI_Irecv(b(2), 1, MPI_DOUBLE_PRECISION, rank, 102, dup, many(2))
  call MPI_Irecv(b(3), 1, MPI_DOUBLE_PRECISION, rank, 103, dup, many(3))
  call MPI_Send(a, 1, MPI_DOUBLE_PRECISION, rank, 102, dup)
  call MPI_Waitany(3, many, idx, status)
  call check_int('MPI_Waitany index', idx, 2)
  call check_int('MPI_Waitany status tag', status%MPI_TAG, 102)
  call MPI_Send(a, 1, MPI_DOUBLE_PRECISION, rank, 103, dup)
  call MPI_Send(a, 1, MPI_DOUBLE_PRECISION, rank, 101, dup)
  outcount = 0
  do while (outcount < 2)
    call MPI_Waitsome(3, many, count, indices, statuses)
    if (count == MPI_UNDEFINED) exit
    do i = 1, count
      if (indices(i) /= 1 .and. indices(i) /= 3) call mt_fail('MPI_Waitsome index not 1 or 3')
      call check_int('MPI_Waitsome tag', statuses(i)%MPI_TAG, 100 + indices(i))
    end do
    outcount = outcount + count
  end do
  call check_int('MPI_Waitsome completions', outcount, 2)
  call MPI_Testany(3, many, idx, flag, MPI_STATUS_IGNORE)
  if (.not. flag) call mt_fail('MPI_Testany on null requests: flag')
  call check_int('MPI_Testany on null requests: index', idx, MPI_UNDEFINED)
  ! more requests than the bindings convert on the stack (16)
  do i = 1, size(many)
    call MPI_Irecv(big(i), 1, MPI_INTEGER, rank, i, dup, many(i))
  end do
  do i = size(many), 1, -1
    call MPI_Send(i * 11, 1, MPI_INTEGER, rank, i, dup)
  end do
  call MPI_Waitall(size(many), many, MPI_STATUSES_IGNORE)
  do i = 1, size(many)
    call check_int('MPI_Waitall of 40', big(i), i * 11)
    if (many(i) /= MPI_REQUEST_NULL) call mt_fail('MPI_Waitall left a request active')
  end do

  ! the large-count form through the generic name, to itself
  bigcount = 10
  call MPI_Sendrecv(a, bigcount, MPI_DOUBLE_PRECISION, rank, 3, b, bigcount, MPI_DOUBLE_PRECISION, &
                    rank, 3, dup, status)
  call check_dbl('MPI_Sendrecv (MPI_Count form)', b(7), a(7))
  call MPI_Ssend(a, 0, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, dup)

  ! a derived type: one row of a 4x3 column-major grid (stride 4)
  grid = reshape([(dble(i), i = 1, 12)], [4, 3])
  call MPI_Type_vector(3, 1, 4, MPI_DOUBLE_PRECISION, column)
  call MPI_Type_commit(column)
  call MPI_Type_get_extent(column, lb, extent)
  call check_addr('MPI_Type_get_extent', extent, int(9 * 8, MPI_ADDRESS_KIND))
  call MPI_Type_get_extent_c(column, biglb, bigcount)
  call check_int('MPI_Type_get_extent_c', int(bigcount), 72)
  col = 0
  if (rank == 0) then
    call MPI_Sendrecv(grid(2, 1), 1, column, 0, 9, col, 3, MPI_DOUBLE_PRECISION, 0, 9, MPI_COMM_SELF, &
                      MPI_STATUS_IGNORE)
    call check_dbl('row 2 through a vector type', col(3), 10.0d0)
  end if
  call MPI_Bcast(grid(3, 1), 1, column, 0, dup)
  call check_dbl('MPI_Bcast of a vector type', grid(3, 3), 11.0d0)
  call MPI_Type_free(column)
  if (column /= MPI_DATATYPE_NULL) call mt_fail('MPI_Type_free did not null the handle')

  ! array sections with gaps (TYPE(*), DIMENSION(..)): sent and received in place, nonblocking
  do i = 1, 9
    sec(:, i) = [(100 * i + k, k = 1, 9)]
  end do
  sec2 = -1
  call MPI_Irecv(sec2(:, 1:5:2), 27, MPI_INTEGER, rank, 21, dup, reqs(1))
  call MPI_Isend(sec(:, 2:6:2), 27, MPI_INTEGER, rank, 21, dup, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  do i = 1, 3
    do k = 1, 9
      call check_int('section received', sec2(k, 2 * i - 1), 100 * (2 * i) + k)
    end do
    call check_int('no write between the columns of the section', sec2(5, 2 * i), -1)
  end do
  b = 0
  call MPI_Sendrecv(a, 10, MPI_DOUBLE_PRECISION, rank, 22, b(10:1:-1), 10, MPI_DOUBLE_PRECISION, &
                    rank, 22, dup, MPI_STATUS_IGNORE)                 ! a reversed section
  call check_dbl('received into a reversed section', b(10), a(1))
  call check_dbl('received into a reversed section (last)', b(1), a(10))
  grid = 0
  if (rank == 0) grid(2, :) = [7d0, 8d0, 9d0]
  call MPI_Bcast(grid(2, :), 3, MPI_DOUBLE_PRECISION, 0, dup)     ! a row: stride 4
  call check_dbl('MPI_Bcast into a row', grid(2, 3), 9d0)
  call check_dbl('MPI_Bcast left the next row alone', grid(3, 3), 0d0)
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(sec(1, 1:3), 5, MPI_INTEGER, rank, 23, dup, ierr)  ! 5 integers, 3 elements
  call MPI_Error_class(ierr, errclass)
  call check_int('more data than the section holds', errclass, MPI_ERR_BUFFER)
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_ARE_FATAL)

  ! collectives
  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, dup)
  call check_int('MPI_Allreduce in place', total, nprocs * (nprocs - 1) / 2)
  allocate (gathered(nprocs), sendall(nprocs), recvall(nprocs))
  call MPI_Gather(rank * 3, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, nprocs - 1, dup)
  if (rank == nprocs - 1) then
    do i = 1, nprocs
      call check_int('MPI_Gather', gathered(i), 3 * (i - 1))
    end do
  end if
  sendall = [(100 * rank + i - 1, i = 1, nprocs)]
  call MPI_Alltoall(sendall, 1, MPI_INTEGER, recvall, 1, MPI_INTEGER, dup)
  do i = 1, nprocs
    call check_int('MPI_Alltoall', recvall(i), 100 * (i - 1) + rank)
  end do
  call MPI_Scan(1, total, 1, MPI_INTEGER, MPI_SUM, dup)
  call check_int('MPI_Scan', total, rank + 1)

  ! a user reduction written for mpi_f08
  call MPI_Op_create(absmax, .true., op)
  vals = [-rank, rank * 2, -7]
  call MPI_Allreduce(MPI_IN_PLACE, vals, 3, MPI_INTEGER, op, dup)
  call check_int('user op 1', vals(1), nprocs - 1)
  call check_int('user op 2', vals(2), 2 * (nprocs - 1))
  call check_int('user op 3', vals(3), merge(-7, 7, nprocs == 1))  ! one process: nothing to combine
  call MPI_Op_free(op)

  ! attributes: the predefined MPI_COMM_DUP_FN and an mpi_f08 copy function
  call MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, keyval, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, keyval, 37_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, keyval, attr, flag)
  if (.not. flag) call mt_fail('attribute not copied')
  call check_addr('copied attribute', attr, 42_MPI_ADDRESS_KIND)
  call check_int('copy callback calls', copies, 1)
  call MPI_Comm_free(dup2)
  call MPI_Comm_free_keyval(keyval)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, keyval, 99_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, keyval, attr, flag)
  call check_addr('MPI_COMM_DUP_FN copy', attr, 99_MPI_ADDRESS_KIND)
  call MPI_Comm_free(dup2)
  call MPI_Comm_free_keyval(keyval)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, attr, flag)
  if (.not. flag .or. attr < 32767) call mt_fail('MPI_TAG_UB')

  ! strings
  call MPI_Get_processor_name(host, resultlen)
  if (resultlen < 1 .or. len_trim(host) /= resultlen) call mt_fail('MPI_Get_processor_name')
  call MPI_Comm_set_name(dup, 'f08 duplicate   ')
  call MPI_Comm_get_name(dup, name, resultlen)
  call check_str('MPI_Comm_get_name', name, 'f08 duplicate')
  call check_int('MPI_Comm_get_name length', resultlen, 13)

  ! errors come back in ierror, and the message names the call and the argument
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(a, -1, MPI_DOUBLE_PRECISION, rank, 0, dup, ierr)
  call MPI_Error_class(ierr, errclass)
  call check_int('error class of a negative count', errclass, MPI_ERR_COUNT)
  call MPI_Error_string(ierr, msg, resultlen)
  if (index(msg, 'MPI_Send') == 0 .or. index(msg, 'count') == 0) call mt_fail('error string: ' // trim(msg))
  call MPI_Send(a, 1, MPI_DOUBLE_PRECISION, nprocs + 5, 0, dup, ierr)
  call MPI_Error_class(ierr, errclass)
  call check_int('error class of a bad rank', errclass, MPI_ERR_RANK)

  call MPI_Sizeof(a, nbytes)
  call check_int("MPI_Sizeof double precision", nbytes, 8)
  call MPI_Sizeof(rank, nbytes, ierr)
  call check_int("MPI_Sizeof integer", nbytes, 4)

  call MPI_Comm_free(dup)
  deallocate (gathered, sendall, recvall)
  call mt_finish()
end program f08

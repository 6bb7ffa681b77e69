! errors.f90: error handling through the Fortran bindings (use mpi).
!
! With MPI_ERRORS_RETURN the ierror argument carries the error: its class (MPI_Error_class)
! and message (MPI_Error_string) are checked for a negative count, an invalid datatype handle,
! an invalid communicator handle (raised on MPI_COMM_SELF, see doc/errors.md), a bad rank and
! a bad tag. Then a user handler written in Fortran (MPI_Comm_create_errhandler) is called
! for an error, by MPI_Comm_call_errhandler, on a duplicate of the communicator (which inherits
! it) and on MPI_COMM_SELF. Works at any number of processes.
module errors_state
  implicit none
  integer :: eh_calls = 0      ! how many times eh ran
  integer :: eh_last_comm = -1 ! the communicator and code of its last call
  integer :: eh_last_code = -1
contains
  ! The user error handler: records the call.
  subroutine eh(comm, code)
    integer :: comm, code
    eh_calls = eh_calls + 1
    eh_last_comm = comm
    eh_last_code = code
  end subroutine eh
end module errors_state

program errors
  use mpi
  use mtest
  use errors_state
  implicit none

  integer :: rank, nprocs, ierr, rc, handler, got, dupcomm
  integer :: buf(4), badtype, badcomm, status(MPI_STATUS_SIZE)
  character(len=MPI_MAX_ERROR_STRING) :: msg
  integer :: msglen

  call mt_init()
  rank = mt_rank
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  buf = (/ 1, 2, 3, 4 /)

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call check_int('MPI_Comm_set_errhandler(MPI_COMM_WORLD) ierror', ierr, MPI_SUCCESS)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  call check_int('MPI_Comm_set_errhandler(MPI_COMM_SELF) ierror', ierr, MPI_SUCCESS)
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, got, ierr)
  call check_int('MPI_Comm_get_errhandler', got, MPI_ERRORS_RETURN)
  call MPI_Errhandler_free(got, ierr)

  ! A negative count.
  rc = MPI_SUCCESS
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, rc)
  call check_class('MPI_Send(count=-1)', rc, MPI_ERR_COUNT)
  if (rc /= MPI_SUCCESS) then
     call error_message(rc)
     call check_has('MPI_Send(count=-1) message', msg(1:msglen), 'MPI_Send')
     call check_has('MPI_Send(count=-1) message', msg(1:msglen), 'count')
  end if

  ! An invalid datatype handle.
  badtype = 123456789
  rc = MPI_SUCCESS
  call MPI_Send(buf, 1, badtype, 0, 0, MPI_COMM_WORLD, rc)
  call check_class('MPI_Send(datatype=123456789)', rc, MPI_ERR_TYPE)
  if (rc /= MPI_SUCCESS) then
     call error_message(rc)
     call check_has('MPI_Send(datatype=123456789) message', msg(1:msglen), 'MPI_Send')
  end if

  ! An invalid communicator handle: raised on MPI_COMM_SELF.
  badcomm = 987654
  rc = MPI_SUCCESS
  call MPI_Send(buf, 1, MPI_INTEGER, 0, 0, badcomm, rc)
  call check_class('MPI_Send(comm=987654)', rc, MPI_ERR_COMM)
  rc = MPI_SUCCESS
  call MPI_Send(buf, 1, MPI_INTEGER, 0, 0, MPI_COMM_NULL, rc)
  call check_class('MPI_Send(comm=MPI_COMM_NULL)', rc, MPI_ERR_COMM)
  if (rc /= MPI_SUCCESS) then
     call error_message(rc)
     call check_has('MPI_Send(comm=MPI_COMM_NULL) message', msg(1:msglen), 'MPI_COMM_NULL')
  end if

  ! A rank that does not exist, and a negative tag.
  rc = MPI_SUCCESS
  call MPI_Recv(buf, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, status, rc)
  call check_class('MPI_Recv(source=size)', rc, MPI_ERR_RANK)
  rc = MPI_SUCCESS
  call MPI_Send(buf, 1, MPI_INTEGER, 0, -5, MPI_COMM_WORLD, rc)
  call check_class('MPI_Send(tag=-5)', rc, MPI_ERR_TAG)

  ! Nothing was sent by the failed calls: a message to self still arrives alone.
  call self_message_check()

  ! A user handler written in Fortran.
  call MPI_Comm_create_errhandler(eh, handler, ierr)
  call check_int('MPI_Comm_create_errhandler ierror', ierr, MPI_SUCCESS)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler, ierr)
  call check_int('MPI_Comm_set_errhandler(user) ierror', ierr, MPI_SUCCESS)
  call MPI_Errhandler_free(handler, ierr) ! the communicator keeps it
  call check_int('MPI_Errhandler_free did not reset the handle', handler, MPI_ERRHANDLER_NULL)
  eh_calls = 0
  rc = MPI_SUCCESS
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, rc)
  call check_int('user handler calls after one error', eh_calls, 1)
  call check_class('MPI_Send(count=-1) with a user handler', rc, MPI_ERR_COUNT)
  call check_int('user handler communicator', eh_last_comm, MPI_COMM_WORLD)
  call check_int('user handler code is the returned code', eh_last_code, rc)
  call check_class('user handler code', eh_last_code, MPI_ERR_COUNT)

  ! MPI_Comm_call_errhandler calls it with the given code.
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER, ierr)
  call check_int('user handler calls after MPI_Comm_call_errhandler', eh_calls, 2)
  call check_int('MPI_Comm_call_errhandler code', eh_last_code, MPI_ERR_OTHER)
  call check_int('MPI_Comm_call_errhandler communicator', eh_last_comm, MPI_COMM_WORLD)

  ! A duplicate inherits the handler.
  call MPI_Comm_dup(MPI_COMM_WORLD, dupcomm, ierr)
  call MPI_Comm_call_errhandler(dupcomm, MPI_ERR_ARG, ierr)
  call check_int('user handler calls on a duplicate', eh_calls, 3)
  call check_int('user handler communicator (duplicate)', eh_last_comm, dupcomm)
  call check_int('user handler code (duplicate)', eh_last_code, MPI_ERR_ARG)
  call MPI_Comm_free(dupcomm, ierr)

  ! On MPI_COMM_SELF: an invalid communicator calls it there.
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, handler, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, handler, ierr)
  call MPI_Errhandler_free(handler, ierr)
  rc = MPI_SUCCESS
  call MPI_Send(buf, 1, MPI_INTEGER, 0, 0, badcomm, rc)
  call check_int('user handler calls for an invalid communicator', eh_calls, 4)
  call check_int('user handler communicator (invalid communicator)', eh_last_comm, &
       MPI_COMM_SELF)
  call check_class('user handler code (invalid communicator)', eh_last_code, MPI_ERR_COMM)
  call check_class('MPI_Send(comm=987654) with a user handler', rc, MPI_ERR_COMM)

  ! Back to MPI_ERRORS_RETURN: the handler is not called any more.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  rc = MPI_SUCCESS
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, rc)
  call check_class('MPI_Send(count=-1) after restoring MPI_ERRORS_RETURN', rc, MPI_ERR_COUNT)
  call check_int('user handler calls after restoring MPI_ERRORS_RETURN', eh_calls, 4)

  call mt_finish()

contains

  ! Checks that the code `code` is of class `expected` (MPI_SUCCESS: that it is MPI_SUCCESS).
  subroutine check_class(what, code, expected)
    character(len=*), intent(in) :: what
    integer, intent(in) :: code, expected
    integer :: c, ierr2
    character(len=100) :: detail
    c = code
    if (code /= MPI_SUCCESS) then
       call MPI_Error_class(code, c, ierr2)
       if (ierr2 /= MPI_SUCCESS) c = -1
    end if
    if (c /= expected) then
       write (detail, '(a,i0,a,i0,a,i0)') ': error class ', c, ' (code ', code, ') expected ', &
            expected
       call mt_fail(what // trim(detail))
    end if
  end subroutine check_class

  ! The message of `code` into msg(1:msglen); checks the length agrees with the text.
  subroutine error_message(code)
    integer, intent(in) :: code
    integer :: ierr2
    msg = repeat('#', len(msg))
    msglen = -1
    call MPI_Error_string(code, msg, msglen, ierr2)
    call check_int('MPI_Error_string ierror', ierr2, MPI_SUCCESS)
    if (msglen <= 0 .or. msglen > MPI_MAX_ERROR_STRING) then
       call check_int('MPI_Error_string resultlen in range', msglen, 1)
       msglen = 0
    else
       call check_int('MPI_Error_string: len_trim(string) vs resultlen', len_trim(msg), msglen)
    end if
  end subroutine error_message

  subroutine check_has(what, text, part)
    character(len=*), intent(in) :: what, text, part
    if (index(text, part) == 0) then
       call mt_fail(what // ': "' // text // '" does not contain "' // part // '"')
    end if
  end subroutine check_has

  subroutine self_message_check()
    integer :: sreq, got(4), st(MPI_STATUS_SIZE), count, ierr2
    got = 0
    call MPI_Isend(buf, 4, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, sreq, ierr2)
    call MPI_Recv(got, 4, MPI_INTEGER, rank, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr2)
    call check_int('message to self after the errors: ierror', ierr2, MPI_SUCCESS)
    call check_int('message to self after the errors: tag', st(MPI_TAG), 9)
    call MPI_Get_count(st, MPI_INTEGER, count, ierr2)
    call check_int('message to self after the errors: count', count, 4)
    call check_int('message to self after the errors: data', got(4), 4)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr2)
  end subroutine self_message_check

end program errors

! attrs_ops.f90: communicator attributes and user reduction operations through the Fortran
! bindings (use mpi).
!
! MPI_Comm_create_keyval with the predefined MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN and
! MPI_COMM_NULL_DELETE_FN and with copy and delete callbacks written in Fortran;
! MPI_Comm_set_attr/get_attr/delete_attr, what MPI_Comm_dup and MPI_Comm_free call, and
! MPI_Comm_free_keyval. MPI_Op_create with Fortran functions, commutative and not, in
! MPI_Allreduce and MPI_Reduce; MPI_Op_commutative; MPI_Op_free. Works at any number of processes.
module attrs_ops_state
  use mpi
  implicit none
  ! What the attribute callbacks saw.
  integer :: copy_calls = 0, copy_last_oldcomm = -1, copy_last_keyval = -1
  integer(kind=MPI_ADDRESS_KIND) :: copy_last_extra = -1, copy_last_val = -1
  integer :: del_calls = 0, del_last_comm = -1, del_last_keyval = -1
  integer(kind=MPI_ADDRESS_KIND) :: del_last_extra = -1, del_last_val = -1
  ! What the operations saw.
  integer :: op_calls = 0, op_last_datatype = -1, op_bad_len = 0
contains

  ! Copies the attribute plus one when extra_state is nonzero; with extra_state 0 the
  ! duplicate gets no attribute.
  subroutine copy_fn(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, &
       ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    copy_calls = copy_calls + 1
    copy_last_oldcomm = oldcomm
    copy_last_keyval = keyval
    copy_last_extra = extra_state
    copy_last_val = attribute_val_in
    if (extra_state /= 0) then
       attribute_val_out = attribute_val_in + 1
       flag = .true.
    else
       flag = .false.
    end if
    ierror = MPI_SUCCESS
  end subroutine copy_fn

  subroutine del_fn(comm, keyval, attribute_val, extra_state, ierror)
    integer :: comm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    del_calls = del_calls + 1
    del_last_comm = comm
    del_last_keyval = keyval
    del_last_val = attribute_val
    del_last_extra = extra_state
    ierror = MPI_SUCCESS
  end subroutine del_fn

  ! Commutative and associative: a (+) b = a + b + 1, so n operands give their sum + n - 1.
  subroutine myop(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i
    op_calls = op_calls + 1
    op_last_datatype = datatype
    if (len <= 0) op_bad_len = op_bad_len + 1
    do i = 1, len
       inoutvec(i) = invec(i) + inoutvec(i) + 1
    end do
  end subroutine myop

  ! Associative, not commutative: odd elements keep the left operand (the lower rank), even
  ! ones the right, so the result is rank 0's odd elements and the last rank's even ones.
  subroutine myop_nc(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i
    op_calls = op_calls + 1
    op_last_datatype = datatype
    do i = 1, len, 2
       inoutvec(i) = invec(i)
    end do
  end subroutine myop_nc
end module attrs_ops_state

program attrs_ops
  use mpi
  use mtest
  use attrs_ops_state
  implicit none

  integer :: rank, nprocs, ierr

  call mt_init()
  rank = mt_rank
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  call test_predefined_callbacks()
  call test_fortran_callbacks()
  call test_ops()

  call mt_finish()

contains

  ! ---------------------------------------------------------------- predefined callbacks
  subroutine test_predefined_callbacks()
    integer :: knull, kdup, c1, c2
    integer(kind=MPI_ADDRESS_KIND) :: val, extra, big
    logical :: flag

    extra = 0
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, knull, extra, &
         ierr)
    call check_int('MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN) ierror', ierr, MPI_SUCCESS)
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kdup, extra, ierr)
    call check_int('MPI_Comm_create_keyval(MPI_COMM_DUP_FN) ierror', ierr, MPI_SUCCESS)

    call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
    ! No attribute yet.
    flag = .true.
    call MPI_Comm_get_attr(c1, knull, val, flag, ierr)
    call check_int('MPI_Comm_get_attr (not set) ierror', ierr, MPI_SUCCESS)
    call check_log('MPI_Comm_get_attr (not set) flag', flag, .false.)

    ! A value that needs more than 32 bits.
    big = 2_MPI_ADDRESS_KIND**40 + 12345_MPI_ADDRESS_KIND
    call MPI_Comm_set_attr(c1, knull, 12345_MPI_ADDRESS_KIND, ierr)
    call check_int('MPI_Comm_set_attr ierror', ierr, MPI_SUCCESS)
    call MPI_Comm_set_attr(c1, kdup, big, ierr)
    call check_int('MPI_Comm_set_attr ierror', ierr, MPI_SUCCESS)
    val = -1
    flag = .false.
    call MPI_Comm_get_attr(c1, knull, val, flag, ierr)
    call check_log('MPI_Comm_get_attr flag', flag, .true.)
    call check_addr('MPI_Comm_get_attr value', val, 12345_MPI_ADDRESS_KIND)
    val = -1
    call MPI_Comm_get_attr(c1, kdup, val, flag, ierr)
    call check_log('MPI_Comm_get_attr flag', flag, .true.)
    call check_addr('MPI_Comm_get_attr value (more than 32 bits)', val, big)

    call MPI_Comm_dup(c1, c2, ierr)
    call check_int('MPI_Comm_dup (with attributes) ierror', ierr, MPI_SUCCESS)
    flag = .true.
    call MPI_Comm_get_attr(c2, knull, val, flag, ierr)
    call check_log('MPI_COMM_NULL_COPY_FN copied the attribute', flag, .false.)
    val = -1
    flag = .false.
    call MPI_Comm_get_attr(c2, kdup, val, flag, ierr)
    call check_log('MPI_COMM_DUP_FN did not copy the attribute', flag, .true.)
    call check_addr('MPI_COMM_DUP_FN value', val, big)

    ! Deleting on the duplicate leaves the original alone.
    call MPI_Comm_delete_attr(c2, kdup, ierr)
    call check_int('MPI_Comm_delete_attr ierror', ierr, MPI_SUCCESS)
    call MPI_Comm_get_attr(c2, kdup, val, flag, ierr)
    call check_log('MPI_Comm_get_attr after MPI_Comm_delete_attr flag', flag, .false.)
    val = -1
    call MPI_Comm_get_attr(c1, kdup, val, flag, ierr)
    call check_log('original attribute gone after deleting the copy', flag, .true.)
    call check_addr('original attribute after deleting the copy', val, big)

    call MPI_Comm_free(c2, ierr)
    call MPI_Comm_free(c1, ierr)
    call MPI_Comm_free_keyval(knull, ierr)
    call check_int('MPI_Comm_free_keyval ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Comm_free_keyval result', knull, MPI_KEYVAL_INVALID)
    call MPI_Comm_free_keyval(kdup, ierr)
    call check_int('MPI_Comm_free_keyval result', kdup, MPI_KEYVAL_INVALID)
  end subroutine test_predefined_callbacks

  ! ---------------------------------------------------------------- Fortran callbacks
  subroutine test_fortran_callbacks()
    integer :: key, key0, c1, c2, c3
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    logical :: flag

    extra = 1000
    call MPI_Comm_create_keyval(copy_fn, del_fn, key, extra, ierr)
    call check_int('MPI_Comm_create_keyval(copy_fn, del_fn) ierror', ierr, MPI_SUCCESS)
    extra = 0
    call MPI_Comm_create_keyval(copy_fn, del_fn, key0, extra, ierr)

    call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
    copy_calls = 0
    del_calls = 0
    call MPI_Comm_set_attr(c1, key, 42_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(c1, key0, 7_MPI_ADDRESS_KIND, ierr)
    call check_int('delete callback called by a first MPI_Comm_set_attr', del_calls, 0)

    ! The duplicate: copy_fn runs once per attribute.
    call MPI_Comm_dup(c1, c2, ierr)
    call check_int('MPI_Comm_dup ierror', ierr, MPI_SUCCESS)
    call check_int('copy callback calls', copy_calls, 2)
    val = -1
    flag = .false.
    call MPI_Comm_get_attr(c2, key, val, flag, ierr)
    call check_log('copied attribute flag', flag, .true.)
    call check_addr('copied attribute value', val, 43_MPI_ADDRESS_KIND)
    flag = .true.
    call MPI_Comm_get_attr(c2, key0, val, flag, ierr)
    call check_log('copy callback returned flag false: attribute present', flag, .false.)
    ! Check what the callback was given, with a duplicate that has only one attribute.
    call MPI_Comm_delete_attr(c1, key0, ierr)
    call check_int('delete callback calls after MPI_Comm_delete_attr', del_calls, 1)
    call check_addr('delete callback attribute_val', del_last_val, 7_MPI_ADDRESS_KIND)
    call check_addr('delete callback extra_state', del_last_extra, 0_MPI_ADDRESS_KIND)
    call check_int('delete callback keyval', del_last_keyval, key0)
    call check_int('delete callback comm', del_last_comm, c1)
    copy_calls = 0
    call MPI_Comm_dup(c1, c3, ierr)
    call check_int('copy callback calls', copy_calls, 1)
    call check_int('copy callback oldcomm', copy_last_oldcomm, c1)
    call check_int('copy callback keyval', copy_last_keyval, key)
    call check_addr('copy callback extra_state', copy_last_extra, 1000_MPI_ADDRESS_KIND)
    call check_addr('copy callback attribute_val_in', copy_last_val, 42_MPI_ADDRESS_KIND)

    ! Setting an attribute again deletes the old value.
    del_calls = 0
    call MPI_Comm_set_attr(c1, key, 50_MPI_ADDRESS_KIND, ierr)
    call check_int('delete callback calls after replacing an attribute', del_calls, 1)
    call check_addr('delete callback value after replacing', del_last_val, 42_MPI_ADDRESS_KIND)
    call check_addr('delete callback extra_state', del_last_extra, 1000_MPI_ADDRESS_KIND)
    call MPI_Comm_get_attr(c1, key, val, flag, ierr)
    call check_addr('replaced attribute value', val, 50_MPI_ADDRESS_KIND)

    ! MPI_Comm_free deletes the attributes.
    del_calls = 0
    call MPI_Comm_free(c3, ierr)
    call check_int('MPI_Comm_free ierror', ierr, MPI_SUCCESS)
    call check_int('delete callback calls on MPI_Comm_free', del_calls, 1)
    call check_addr('delete callback value on MPI_Comm_free', del_last_val, 43_MPI_ADDRESS_KIND)
    call check_int('delete callback keyval on MPI_Comm_free', del_last_keyval, key)
    del_calls = 0
    call MPI_Comm_free(c2, ierr)
    call check_int('delete callback calls on MPI_Comm_free', del_calls, 1)
    call check_addr('delete callback value on MPI_Comm_free', del_last_val, 43_MPI_ADDRESS_KIND)

    ! Freeing the keyval first: the attribute stays until its communicator goes.
    call MPI_Comm_free_keyval(key, ierr)
    call check_int('MPI_Comm_free_keyval (in use) ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Comm_free_keyval result', key, MPI_KEYVAL_INVALID)
    del_calls = 0
    call MPI_Comm_free(c1, ierr)
    call check_int('delete callback calls on MPI_Comm_free', del_calls, 1)
    call check_addr('delete callback value on MPI_Comm_free', del_last_val, 50_MPI_ADDRESS_KIND)
    call MPI_Comm_free_keyval(key0, ierr)
  end subroutine test_fortran_callbacks

  ! ---------------------------------------------------------------- operations
  subroutine test_ops()
    integer, parameter :: L = 6
    integer :: op, opnc, sbuf(L), rbuf(L), i, r, expected, root, all_calls
    logical :: commute

    call MPI_Op_create(myop, .true., op, ierr)
    call check_int('MPI_Op_create ierror', ierr, MPI_SUCCESS)
    call MPI_Op_create(myop_nc, .false., opnc, ierr)
    call check_int('MPI_Op_create (not commutative) ierror', ierr, MPI_SUCCESS)
    commute = .false.
    call MPI_Op_commutative(op, commute, ierr)
    call check_log('MPI_Op_commutative(commutative op)', commute, .true.)
    call MPI_Op_commutative(opnc, commute, ierr)
    call check_log('MPI_Op_commutative(non-commutative op)', commute, .false.)

    do i = 1, L
       sbuf(i) = 10 * rank + i
    end do
    op_calls = 0
    op_last_datatype = -1
    rbuf = -1
    call MPI_Allreduce(sbuf, rbuf, L, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(user op) ierror', ierr, MPI_SUCCESS)
    do i = 1, L
       expected = nprocs - 1
       do r = 0, nprocs - 1
          expected = expected + 10 * r + i
       end do
       call check_int('MPI_Allreduce(user op) data', rbuf(i), expected)
    end do
    if (nprocs > 1) then
       ! some process combined (which ones is the algorithm's choice: across nodes, a node's
       ! leader combines for it), and each that did saw the datatype
       call MPI_Allreduce(op_calls, all_calls, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
       if (all_calls == 0) call check_int('user op calls, all processes', all_calls, 1)
       if (op_calls > 0) call check_int('user op datatype', op_last_datatype, MPI_INTEGER)
    end if
    call check_int('user op called with len <= 0', op_bad_len, 0)

    ! Not commutative: the order of the operands is the order of the ranks.
    root = nprocs - 1
    rbuf = -1
    call MPI_Reduce(sbuf, rbuf, L, MPI_INTEGER, opnc, root, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Reduce(non-commutative user op) ierror', ierr, MPI_SUCCESS)
    if (rank == root) call check_nc('MPI_Reduce(non-commutative user op)', rbuf)
    rbuf = -1
    call MPI_Allreduce(sbuf, rbuf, L, MPI_INTEGER, opnc, MPI_COMM_WORLD, ierr)
    call check_nc('MPI_Allreduce(non-commutative user op)', rbuf)

    call MPI_Op_free(op, ierr)
    call check_int('MPI_Op_free ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Op_free result', op, MPI_OP_NULL)
    call MPI_Op_free(opnc, ierr)
    call check_int('MPI_Op_free result', opnc, MPI_OP_NULL)
  end subroutine test_ops

  ! What a reduction with myop_nc of the sbuf of test_ops leaves: rank 0's odd elements and the
  ! last rank's even ones.
  subroutine check_nc(what, rbuf)
    character(len=*), intent(in) :: what
    integer, intent(in) :: rbuf(:)
    integer :: i
    do i = 1, size(rbuf)
       if (mod(i, 2) == 1) then
          call check_int(what // ' odd element', rbuf(i), i)
       else
          call check_int(what // ' even element', rbuf(i), 10 * (nprocs - 1) + i)
       end if
    end do
  end subroutine check_nc

end program attrs_ops

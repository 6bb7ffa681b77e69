! particles_f08.f90: a derived datatype and collectives with `use mpi_f08`. Each rank owns a few
! particles, a Fortran derived type (position, mass, id); an MPI struct type describes it, so
! MPI_Gather brings every particle to rank 0 as it is. Rank 0 computes the centre of mass and
! broadcasts it; MPI_Allreduce of the masses checks the total.
!   mpiexec -n 4 ./particles_f08 [particles per rank]
program particles_f08
  use mpi_f08
  implicit none

  type :: particle
    double precision :: x(3)
    double precision :: mass
    integer :: id
  end type particle

  type(particle), allocatable :: mine(:), all(:)
  type(MPI_Datatype) :: particle_type, struct_type
  integer :: rank, nprocs, n, i, blocklens(3)
  integer(kind=MPI_ADDRESS_KIND) :: base, displs(3), lb, extent
  type(MPI_Datatype) :: types(3)
  double precision :: centre(3), total_mass, my_mass
  character(len=16) :: arg

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  n = 5
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if

  ! Particle k (counting from 0 over all ranks) sits at (k, 2k, -k) with mass 1 + mod(k, 3).
  allocate (mine(n))
  do i = 1, n
    mine(i)%id = rank * n + i - 1
    mine(i)%x = dble(mine(i)%id) * [1d0, 2d0, -1d0]
    mine(i)%mass = 1d0 + mod(mine(i)%id, 3)
  end do

  ! The struct type: three blocks at the components' addresses, resized to the array stride.
  call MPI_Get_address(mine(1), base)
  call MPI_Get_address(mine(1)%x, displs(1))
  call MPI_Get_address(mine(1)%mass, displs(2))
  call MPI_Get_address(mine(1)%id, displs(3))
  displs = displs - base
  blocklens = [3, 1, 1]
  types = [MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_INTEGER]
  call MPI_Type_create_struct(3, blocklens, displs, types, struct_type)
  call MPI_Get_address(mine(2), extent)
  lb = 0
  extent = extent - base
  call MPI_Type_create_resized(struct_type, lb, extent, particle_type)
  call MPI_Type_commit(particle_type)
  call MPI_Type_free(struct_type)

  if (rank == 0) then
    allocate (all(n * nprocs))
  else
    allocate (all(1))
  end if
  call MPI_Gather(mine, n, particle_type, all, n, particle_type, 0, MPI_COMM_WORLD)

  if (rank == 0) then
    do i = 1, n * nprocs
      if (all(i)%id /= i - 1) then
        print '(a,i0,a,i0)', 'particle ', i, ' arrived with id ', all(i)%id
        call MPI_Abort(MPI_COMM_WORLD, 1)
      end if
    end do
    centre = 0
    do i = 1, n * nprocs
      centre = centre + all(i)%mass * all(i)%x
    end do
    centre = centre / sum(all%mass)
  end if
  call MPI_Bcast(centre, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)

  my_mass = sum(mine%mass)
  call MPI_Allreduce(my_mass, total_mass, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == nprocs - 1) then
    print '(i0,a,i0,a,f0.1)', n * nprocs, ' particles on ', nprocs, ' processes, total mass ', total_mass
    print '(a,3(1x,f0.6))', 'centre of mass', centre
  end if

  call MPI_Type_free(particle_type)
  deallocate (mine, all)
  call MPI_Finalize()
end program particles_f08

C misc.f: environment and communicator calls through mpif.h, in
C fixed form as old FORTRAN 77 programs use it: MPI_Initialized,
C MPI_Finalized, MPI_Get_processor_name, MPI_Error_string and
C MPI_Error_class, MPI_Comm_set_name/MPI_Comm_get_name, MPI_Wtime and
C MPI_Wtick, MPI_Comm_dup/split/compare/free, MPI_Comm_get_attr of
C MPI_TAG_UB, MPI_Get_version and MPI_Type_size of the basic types.
C The checks, MPI_Init and the end (MPI_Finalize, then MPI_Finalized)
C are module mtest's (mtest.f90), which exports no MPI names.
C Works at any number of processes.
      PROGRAM MISC
      USE MTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, RESLEN, I, ICLASS
      INTEGER DUPCOM, SPLCOM, NULCOM, IRES, SRANK, SSIZE, COLOR
      INTEGER VERS, SUBVER, TSIZE
      INTEGER (KIND=MPI_ADDRESS_KIND) TAGUB
      LOGICAL FLAG, BADCHR
      DOUBLE PRECISION T1, T2, TICK
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) PNAME
      CHARACTER*(MPI_MAX_ERROR_STRING) ESTR
      CHARACTER*(MPI_MAX_OBJECT_NAME) CNAME
      CHARACTER*24 INNAME
C
      FLAG = .TRUE.
      CALL MPI_INITIALIZED(FLAG, IERR)
      CALL CHECK_LOG('MPI_Initialized before MPI_Init', FLAG, .FALSE.)
      CALL MT_INIT()
      RANK = MT_RANK
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      FLAG = .FALSE.
      CALL MPI_INITIALIZED(FLAG, IERR)
      CALL CHECK_LOG('MPI_Initialized after MPI_Init', FLAG, .TRUE.)
      FLAG = .TRUE.
      CALL MPI_FINALIZED(FLAG, IERR)
      CALL CHECK_LOG('MPI_Finalized before MPI_Finalize', FLAG, .FALSE.)
C
C     The processor name: RESLEN characters, blank after them.
      DO 10 I = 1, MPI_MAX_PROCESSOR_NAME
         PNAME(I:I) = 'X'
   10 CONTINUE
      RESLEN = -1
      CALL MPI_GET_PROCESSOR_NAME(PNAME, RESLEN, IERR)
      CALL CHECK_INT('MPI_Get_processor_name ierror', IERR, MPI_SUCCESS)
      IF (RESLEN .LE. 0 .OR. RESLEN .GT. MPI_MAX_PROCESSOR_NAME) THEN
         CALL CHECK_INT('MPI_Get_processor_name resultlen in range',
     &        RESLEN, 1)
      ELSE
         IF (RESLEN .LT. MPI_MAX_PROCESSOR_NAME) THEN
            CALL CHECK_STR('MPI_Get_processor_name not blank after '//
     &           'resultlen', PNAME(RESLEN+1:), ' ')
         END IF
         BADCHR = .FALSE.
         DO 20 I = 1, RESLEN
            IF (ICHAR(PNAME(I:I)) .EQ. 0) BADCHR = .TRUE.
   20    CONTINUE
         CALL CHECK_LOG('MPI_Get_processor_name has a NUL in the name',
     &        BADCHR, .FALSE.)
         CALL CHECK_INT('MPI_Get_processor_name LEN_TRIM(name)',
     &        LEN_TRIM(PNAME), RESLEN)
      END IF
C
C     Error strings and classes.
      DO 30 I = 1, MPI_MAX_ERROR_STRING
         ESTR(I:I) = 'X'
   30 CONTINUE
      RESLEN = -1
      CALL MPI_ERROR_STRING(MPI_ERR_COUNT, ESTR, RESLEN, IERR)
      CALL CHECK_INT('MPI_Error_string ierror', IERR, MPI_SUCCESS)
      IF (RESLEN .LE. 0 .OR. RESLEN .GT. MPI_MAX_ERROR_STRING) THEN
         CALL CHECK_INT('MPI_Error_string resultlen in range',
     &        RESLEN, 1)
      ELSE
         CALL CHECK_INT('MPI_Error_string LEN_TRIM(string)',
     &        LEN_TRIM(ESTR), RESLEN)
         IF (ESTR(1:RESLEN) .EQ. ' ') THEN
            CALL MT_FAIL('MPI_Error_string(MPI_ERR_COUNT) is blank')
         END IF
      END IF
      ICLASS = -1
      CALL MPI_ERROR_CLASS(MPI_ERR_COUNT, ICLASS, IERR)
      CALL CHECK_INT('MPI_Error_class(MPI_ERR_COUNT)', ICLASS,
     &     MPI_ERR_COUNT)
      CALL MPI_ERROR_CLASS(MPI_SUCCESS, ICLASS, IERR)
      CALL CHECK_INT('MPI_Error_class(MPI_SUCCESS)', ICLASS,
     &     MPI_SUCCESS)
C
C     Communicator names.
      CNAME = ' '
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, CNAME, RESLEN, IERR)
      CALL CHECK_INT('MPI_Comm_get_name ierror', IERR, MPI_SUCCESS)
      CALL CHECK_STR('MPI_Comm_get_name(MPI_COMM_WORLD)', CNAME,
     &     'MPI_COMM_WORLD')
      CALL CHECK_INT('MPI_Comm_get_name(MPI_COMM_WORLD) resultlen',
     &     RESLEN, 14)
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, DUPCOM, IERR)
      CALL CHECK_INT('MPI_Comm_dup ierror', IERR, MPI_SUCCESS)
C     The input's trailing blanks are not part of the name.
      INNAME = 'Fortran dup 7'
      CALL MPI_COMM_SET_NAME(DUPCOM, INNAME, IERR)
      CALL CHECK_INT('MPI_Comm_set_name ierror', IERR, MPI_SUCCESS)
      DO 40 I = 1, MPI_MAX_OBJECT_NAME
         CNAME(I:I) = 'X'
   40 CONTINUE
      RESLEN = -1
      CALL MPI_COMM_GET_NAME(DUPCOM, CNAME, RESLEN, IERR)
      CALL CHECK_STR('MPI_Comm_get_name after MPI_Comm_set_name', CNAME,
     &     'Fortran dup 7')
      CALL CHECK_INT('MPI_Comm_get_name resultlen', RESLEN, 13)
C     A name with leading blanks keeps them.
      CALL MPI_COMM_SET_NAME(DUPCOM, '  two  ', IERR)
      CALL MPI_COMM_GET_NAME(DUPCOM, CNAME, RESLEN, IERR)
      CALL CHECK_STR('MPI_Comm_get_name (leading blanks)', CNAME,
     &     '  two')
      CALL CHECK_INT('MPI_Comm_get_name resultlen (leading blanks)',
     &     RESLEN, 5)
C
C     Comparisons, split and free.
      IRES = -1
      CALL MPI_COMM_COMPARE(MPI_COMM_WORLD, MPI_COMM_WORLD, IRES, IERR)
      CALL CHECK_INT('MPI_Comm_compare(world, world)', IRES, MPI_IDENT)
      CALL MPI_COMM_COMPARE(MPI_COMM_WORLD, DUPCOM, IRES, IERR)
      CALL CHECK_INT('MPI_Comm_compare(world, dup)', IRES,
     &     MPI_CONGRUENT)
C     Even and odd ranks, each group in reverse order.
      COLOR = MOD(RANK, 2)
      CALL MPI_COMM_SPLIT(MPI_COMM_WORLD, COLOR, -RANK, SPLCOM, IERR)
      CALL CHECK_INT('MPI_Comm_split ierror', IERR, MPI_SUCCESS)
      CALL MPI_COMM_RANK(SPLCOM, SRANK, IERR)
      CALL MPI_COMM_SIZE(SPLCOM, SSIZE, IERR)
      CALL CHECK_INT('MPI_Comm_split size', SSIZE, (NPROCS-COLOR+1)/2)
      CALL CHECK_INT('MPI_Comm_split rank', SRANK, (NPROCS-1-RANK)/2)
      CALL MPI_COMM_COMPARE(MPI_COMM_WORLD, SPLCOM, IRES, IERR)
      IF (NPROCS .EQ. 1) THEN
         CALL CHECK_INT('MPI_Comm_compare(world, split)', IRES,
     &        MPI_CONGRUENT)
      ELSE
         CALL CHECK_INT('MPI_Comm_compare(world, split)', IRES,
     &        MPI_UNEQUAL)
      END IF
C     MPI_UNDEFINED on rank 0 gives it MPI_COMM_NULL.
      IF (RANK .EQ. 0) THEN
         COLOR = MPI_UNDEFINED
      ELSE
         COLOR = 1
      END IF
      CALL MPI_COMM_SPLIT(MPI_COMM_WORLD, COLOR, 0, NULCOM, IERR)
      CALL CHECK_INT('MPI_Comm_split(MPI_UNDEFINED) ierror', IERR,
     &     MPI_SUCCESS)
      IF (RANK .EQ. 0) THEN
         CALL CHECK_INT('MPI_Comm_split(MPI_UNDEFINED) result', NULCOM,
     &        MPI_COMM_NULL)
      ELSE
         CALL MPI_COMM_SIZE(NULCOM, SSIZE, IERR)
         CALL CHECK_INT('MPI_Comm_split(color 1) size', SSIZE, NPROCS-1)
         CALL MPI_COMM_FREE(NULCOM, IERR)
      END IF
      CALL MPI_COMM_FREE(SPLCOM, IERR)
      CALL CHECK_INT('MPI_Comm_free ierror', IERR, MPI_SUCCESS)
      CALL CHECK_INT('MPI_Comm_free result', SPLCOM, MPI_COMM_NULL)
      CALL MPI_COMM_FREE(DUPCOM, IERR)
      CALL CHECK_INT('MPI_Comm_free result', DUPCOM, MPI_COMM_NULL)
C
C     Time.
      T1 = MPI_WTIME()
      TICK = MPI_WTICK()
      DO 50 I = 1, 1000
         T2 = MPI_WTIME()
   50 CONTINUE
      IF (T2 .LT. T1) THEN
         CALL CHECK_DBL('MPI_Wtime went backwards', T2, T1)
      END IF
      IF (TICK .LE. 0.0D0 .OR. TICK .GT. 1.0D0) THEN
         CALL CHECK_DBL('MPI_Wtick out of (0, 1]', TICK, 1.0D-9)
      END IF
C
C     The largest tag: an attribute of MPI_COMM_WORLD.
      FLAG = .FALSE.
      TAGUB = -1
      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, TAGUB, FLAG,
     &     IERR)
      CALL CHECK_INT('MPI_Comm_get_attr(MPI_TAG_UB) ierror', IERR,
     &     MPI_SUCCESS)
      CALL CHECK_LOG('MPI_Comm_get_attr(MPI_TAG_UB) flag', FLAG, .TRUE.)
      IF (TAGUB .LT. 32767) THEN
         CALL CHECK_ADDR('MPI_TAG_UB (at least 32767)', TAGUB,
     &        32767_MPI_ADDRESS_KIND)
      END IF
C
C     Version.
      VERS = -1
      SUBVER = -1
      CALL MPI_GET_VERSION(VERS, SUBVER, IERR)
      CALL CHECK_INT('MPI_Get_version ierror', IERR, MPI_SUCCESS)
      IF (VERS .LT. 3 .OR. SUBVER .LT. 0) THEN
         CALL CHECK_INT('MPI_Get_version version (at least 3)', VERS, 3)
      END IF
      CALL CHECK_INT('MPI_VERSION', MPI_VERSION, VERS)
      CALL CHECK_INT('MPI_SUBVERSION', MPI_SUBVERSION, SUBVER)
C
C     Sizes of the Fortran basic types.
      CALL MPI_TYPE_SIZE(MPI_INTEGER, TSIZE, IERR)
      CALL CHECK_INT('MPI_Type_size(MPI_INTEGER)', TSIZE, 4)
      CALL MPI_TYPE_SIZE(MPI_DOUBLE_PRECISION, TSIZE, IERR)
      CALL CHECK_INT('MPI_Type_size(MPI_DOUBLE_PRECISION)', TSIZE, 8)
      CALL MPI_TYPE_SIZE(MPI_COMPLEX, TSIZE, IERR)
      CALL CHECK_INT('MPI_Type_size(MPI_COMPLEX)', TSIZE, 8)
      CALL MPI_TYPE_SIZE(MPI_LOGICAL, TSIZE, IERR)
      CALL CHECK_INT('MPI_Type_size(MPI_LOGICAL)', TSIZE, 4)
      CALL MPI_TYPE_SIZE(MPI_CHARACTER, TSIZE, IERR)
      CALL CHECK_INT('MPI_Type_size(MPI_CHARACTER)', TSIZE, 1)
      CALL MPI_TYPE_SIZE(MPI_REAL, TSIZE, IERR)
      CALL CHECK_INT('MPI_Type_size(MPI_REAL)', TSIZE, 4)
C
      CALL MT_FINISH()
      END

/*
 * fint.c: handle conversion between C and Fortran (MPI_X_c2f, MPI_X_f2c
 * for every handle kind, Status_c2f / Status_f2c).  A p2pmpi handle is
 * already an integer, tagged by kind and checked on every use
 * (handles.c), so a Fortran handle is the same integer: converting
 * never fails, and a forged integer is caught where it is used, as any
 * forged C handle is.
 */
#include <string.h>

#include "mpii.h"

#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
MPI_Fint
PMPI_Comm_c2f(MPI_Comm comm)
{
    MPII_ENTER;
    return (MPI_Fint)comm;
}

#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
MPI_Comm
PMPI_Comm_f2c(MPI_Fint comm)
{
    MPII_ENTER;
    return (MPI_Comm)comm;
}

#pragma weak MPI_Type_c2f = PMPI_Type_c2f
MPI_Fint
PMPI_Type_c2f(MPI_Datatype datatype)
{
    MPII_ENTER;
    return (MPI_Fint)datatype;
}

#pragma weak MPI_Type_f2c = PMPI_Type_f2c
MPI_Datatype
PMPI_Type_f2c(MPI_Fint datatype)
{
    MPII_ENTER;
    return (MPI_Datatype)datatype;
}

#pragma weak MPI_Group_c2f = PMPI_Group_c2f
MPI_Fint
PMPI_Group_c2f(MPI_Group group)
{
    MPII_ENTER;
    return (MPI_Fint)group;
}

#pragma weak MPI_Group_f2c = PMPI_Group_f2c
MPI_Group
PMPI_Group_f2c(MPI_Fint group)
{
    MPII_ENTER;
    return (MPI_Group)group;
}

#pragma weak MPI_Request_c2f = PMPI_Request_c2f
MPI_Fint
PMPI_Request_c2f(MPI_Request request)
{
    MPII_ENTER;
    return (MPI_Fint)request;
}

#pragma weak MPI_Request_f2c = PMPI_Request_f2c
MPI_Request
PMPI_Request_f2c(MPI_Fint request)
{
    MPII_ENTER;
    return (MPI_Request)request;
}

#pragma weak MPI_Op_c2f = PMPI_Op_c2f
MPI_Fint
PMPI_Op_c2f(MPI_Op op)
{
    MPII_ENTER;
    return (MPI_Fint)op;
}

#pragma weak MPI_Op_f2c = PMPI_Op_f2c
MPI_Op
PMPI_Op_f2c(MPI_Fint op)
{
    MPII_ENTER;
    return (MPI_Op)op;
}

#pragma weak MPI_Info_c2f = PMPI_Info_c2f
MPI_Fint
PMPI_Info_c2f(MPI_Info info)
{
    MPII_ENTER;
    return (MPI_Fint)info;
}

#pragma weak MPI_Info_f2c = PMPI_Info_f2c
MPI_Info
PMPI_Info_f2c(MPI_Fint info)
{
    MPII_ENTER;
    return (MPI_Info)info;
}

#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
MPI_Fint
PMPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    MPII_ENTER;
    return (MPI_Fint)errhandler;
}

#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
MPI_Errhandler
PMPI_Errhandler_f2c(MPI_Fint errhandler)
{
    MPII_ENTER;
    return (MPI_Errhandler)errhandler;
}

#pragma weak MPI_Win_c2f = PMPI_Win_c2f
MPI_Fint
PMPI_Win_c2f(MPI_Win win)
{
    MPII_ENTER;
    return (MPI_Fint)win;
}

#pragma weak MPI_Win_f2c = PMPI_Win_f2c
MPI_Win
PMPI_Win_f2c(MPI_Fint win)
{
    MPII_ENTER;
    return (MPI_Win)win;
}

#pragma weak MPI_Message_c2f = PMPI_Message_c2f
MPI_Fint
PMPI_Message_c2f(MPI_Message message)
{
    MPII_ENTER;
    return (MPI_Fint)message;
}

#pragma weak MPI_Message_f2c = PMPI_Message_f2c
MPI_Message
PMPI_Message_f2c(MPI_Fint message)
{
    MPII_ENTER;
    return (MPI_Message)message;
}

#pragma weak MPI_Status_c2f = PMPI_Status_c2f
int
PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    MPII_ENTER;
    if (c_status == MPI_STATUS_IGNORE || f_status == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_c2f");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_f2c = PMPI_Status_f2c
int
PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    MPII_ENTER;
    if (f_status == NULL || c_status == MPI_STATUS_IGNORE)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_f2c");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}

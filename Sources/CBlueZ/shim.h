// BlueZ headers only: we talk to the kernel through sockets and never link libbluetooth.
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

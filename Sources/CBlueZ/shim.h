// BlueZ headers only: we talk to the kernel through sockets and never link libbluetooth
// (hci_lib.h is here for its static inline filter helpers, which need no library).
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

// The ioctl numbers are function-like macros (_IOW/_IOR), which do not import into Swift;
// constants initialised from them do, so the header stays the one source of their values.
static const unsigned long ph_HCIDEVUP = HCIDEVUP;
static const unsigned long ph_HCIGETDEVLIST = HCIGETDEVLIST;
static const unsigned long ph_HCIGETDEVINFO = HCIGETDEVINFO;

// HCIGETDEVLIST's argument: struct hci_dev_list_req ends in a flexible array; this is it
// with room for every adapter the kernel can have.
struct ph_hci_dev_list {
    uint16_t dev_num;
    struct hci_dev_req dev_req[HCI_MAX_DEV];
};

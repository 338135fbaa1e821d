# The MEOS bundle's targets, for the top-level Makefile to include:
#   include bundles/meos/meos.mk
MEOS_DIR := bundles/meos

.PHONY: meos meos-test meos-bench meos-clean

meos:
	$(MAKE) -C $(MEOS_DIR)

meos-test:
	$(MAKE) -C $(MEOS_DIR) test

meos-bench:
	$(MAKE) -C $(MEOS_DIR) bench

meos-clean:
	$(MAKE) -C $(MEOS_DIR) clean

# cli: the normsweep program; argument parsing and subcommands, the only place that exits.
bin_PROGRAMS += normsweep
normsweep_SOURCES = src/cli/main.c src/cli/ns_cli.c src/cli/ns_cli.h \
	src/cli/ns_hold.c src/cli/ns_hold.h \
	src/cli/cmd_run.c src/cli/cmd_validate.c src/cli/cmd_tokenize.c src/cli/cmd_dump.c \
	src/cli/cmd_mkmodel.c src/cli/cmd_train.c src/cli/cmd_train_grid.c src/cli/cmd_assets.c src/cli/cmd_archive.c src/cli/cmd_verify.c \
	src/cli/ns_campaign_cli.c src/cli/ns_campaign_cli.h
normsweep_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
normsweep_LDADD = $(NS_LIBS) $(NS_EXT_LIBS)
